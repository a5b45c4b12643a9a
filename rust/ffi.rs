// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C shim (`rust/shim.c`).
//!
//! Each function is a one-line wrapper of a kernel macro or inline function of
//! the same name without the `rtrs_` prefix; see the comment above each one in
//! `shim.c`. Only the safe abstractions of this layer call them.

use kernel::{
    bindings,
    ffi::{
        c_char,
        c_int,
        c_uint,
        c_ulong,
        c_void, //
    },
};

/// Result of `rtrs_raw_spin_lock_irqsave_try`.
#[repr(C)]
pub(crate) struct IrqsaveTry {
    pub(crate) flags: c_ulong,
    pub(crate) taken: bool,
}

extern "C" {
    pub(crate) fn rtrs_raw_spin_lock_irqsave_try(lock: *mut bindings::raw_spinlock_t)
        -> IrqsaveTry;
    // `key` is a `struct lock_class_key *`, empty without lockdep.
    pub(crate) fn rtrs_raw_spin_lock_init(
        lock: *mut bindings::raw_spinlock_t,
        name: *const c_char,
        key: *mut c_void,
    );
    pub(crate) fn rtrs_raw_spin_lock(lock: *mut bindings::raw_spinlock_t);
    pub(crate) fn rtrs_raw_spin_unlock(lock: *mut bindings::raw_spinlock_t);
    pub(crate) fn rtrs_raw_spin_trylock(lock: *mut bindings::raw_spinlock_t) -> c_int;
    pub(crate) fn rtrs_raw_spin_lock_irqsave(lock: *mut bindings::raw_spinlock_t) -> c_ulong;
    pub(crate) fn rtrs_raw_spin_unlock_irqrestore(
        lock: *mut bindings::raw_spinlock_t,
        flags: c_ulong,
    );
    pub(crate) fn rtrs_raw_spin_assert_held(lock: *mut bindings::raw_spinlock_t);
    pub(crate) fn rtrs_preempt_disable();
    pub(crate) fn rtrs_preempt_enable();
    pub(crate) fn rtrs_migrate_disable();
    pub(crate) fn rtrs_migrate_enable();
    pub(crate) fn rtrs_in_hardirq() -> bool;
    pub(crate) fn rtrs_in_task() -> bool;
    pub(crate) fn rtrs_preemptible() -> bool;
    pub(crate) fn rtrs_irqs_disabled() -> bool;
    pub(crate) fn rtrs_smp_processor_id() -> c_uint;
    pub(crate) fn rtrs_cpu_online(cpu: c_uint) -> bool;
    pub(crate) fn rtrs_cpu_active(cpu: c_uint) -> bool;
    pub(crate) fn rtrs_cpu_possible(cpu: c_uint) -> bool;
    pub(crate) fn rtrs_alloc_percpu(size: usize, align: usize) -> *mut c_void;
    pub(crate) fn rtrs_per_cpu_ptr(ptr: *mut c_void, cpu: c_uint) -> *mut c_void;
    pub(crate) fn rtrs_this_cpu_ptr(ptr: *mut c_void) -> *mut c_void;
    pub(crate) fn rtrs_kthread_create_on_cpu(
        f: unsafe extern "C" fn(*mut c_void) -> c_int,
        data: *mut c_void,
        cpu: c_uint,
        name: *const c_char,
        prio: c_int,
    ) -> *mut c_void;
    pub(crate) fn rtrs_kthread_stop_put(t: *mut c_void) -> c_int;
    pub(crate) fn rtrs_module_get();
    pub(crate) fn rtrs_module_put();
    pub(crate) fn rtrs_set_current_interruptible();
    pub(crate) fn rtrs_set_current_running();
    // `lock` is a `struct mutex *` (a `bindings::mutex` here trips
    // `improper_ctypes`: on PREEMPT_RT it reaches a field-less struct).
    pub(crate) fn rtrs_mutex_lock_interruptible(lock: *mut c_void) -> c_int;
    pub(crate) fn rtrs_current_is_idle() -> bool;
    pub(crate) fn rtrs_trace_puts(s: *const c_char);
    pub(crate) fn rtrs_current_pinned_cpu() -> c_int;
    pub(crate) fn rtrs_capable_rt() -> bool;
    pub(crate) fn rtrs_capable_perfmon() -> bool;
    pub(crate) fn rtrs_rtprio_allows(prio: c_uint) -> bool;
    pub(crate) fn rtrs_capable_admin() -> bool;
    pub(crate) fn rtrs_smp_mb();
    pub(crate) fn rtrs_local_lock_init(lock: *mut c_void, name: *const c_char, key: *mut c_void);
    pub(crate) fn rtrs_local_lock(lock: *mut c_void);
    pub(crate) fn rtrs_local_unlock(lock: *mut c_void);
    pub(crate) fn rtrs_cpuhp_add(
        name: *const c_char,
        online: Option<unsafe extern "C" fn(c_uint) -> c_int>,
        offline: Option<unsafe extern "C" fn(c_uint) -> c_int>,
    ) -> c_int;
    pub(crate) fn rtrs_cpuhp_remove(state: c_int);
    /// `poll` is the C hook `__poll_t (*)(struct file *, struct
    /// poll_table_struct *)`, or NULL. It is declared here as a plain
    /// pointer: a function pointer type naming `bindings::file` trips
    /// `improper_ctypes` on kernels whose `struct file` holds an empty
    /// struct (`lock_class_key` without lockdep). The function it points
    /// to must have that C type (`rtrs::file`'s trampoline has).
    pub(crate) fn rtrs_file_setup(f: *mut c_void, poll: *const c_void) -> c_int;
    pub(crate) fn rtrs_set_current_fifo(prio: c_int) -> c_int;
    pub(crate) fn rtrs_current_tid() -> c_int;
    pub(crate) fn rtrs_current_flags() -> c_uint;
    // `pdev` is a `struct pci_dev *` (whose bindgen type is not FFI-safe).
    pub(crate) fn rtrs_pci_domain_nr(pdev: *mut c_void) -> c_int;
    pub(crate) fn rtrs_local_irq_save() -> c_ulong;
    pub(crate) fn rtrs_local_irq_restore(flags: c_ulong);
    pub(crate) fn rtrs_irq_stack(store: *mut c_ulong, size: c_uint) -> c_uint;
    pub(crate) fn rtrs_symbol_name(addr: c_ulong, with_offset: bool, buf: *mut c_char, len: usize);
    pub(crate) fn rtrs_probes_register(p: *mut RawProbes) -> c_int;
    pub(crate) fn rtrs_probes_unregister(p: *mut RawProbes);
}

/// `struct rtrs_tp_event` (`rust/shim.h`): what a tracepoint probe saw.
#[repr(C)]
pub(crate) struct RawEvent {
    pub(crate) at: i64,
    /// `enum rtrs_tp_type`.
    pub(crate) kind_of_event: u32,
    /// `enum rtrs_tp_kind`: `rtcore::blame::Kind`'s numbers.
    pub(crate) kind: u32,
    pub(crate) id: u64,
    pub(crate) aux: u64,
    pub(crate) name: *const c_char,
    pub(crate) policy: u16,
    pub(crate) prio: i16,
}

// The layouts `rust/shim/tracepoint.c` asserts too.
const _: () = assert!(core::mem::size_of::<RawEvent>() == 48);
const _: () = assert!(core::mem::size_of::<RawProbes>() == (3 + RTRS_TP_NR) * 8);

/// `enum rtrs_tp_type`.
pub(crate) const RTRS_TP_SWITCH: u32 = 0;
pub(crate) const RTRS_TP_ENTER: u32 = 1;
pub(crate) const RTRS_TP_EXIT: u32 = 2;

/// `RTRS_TP_NR`: the tracepoints probed.
pub(crate) const RTRS_TP_NR: usize = 7;

/// `struct rtrs_probes` (`rust/shim.h`).
#[repr(C)]
pub(crate) struct RawProbes {
    /// The event is a `*const RawEvent` (`void *` on both sides: one type
    /// for kCFI).
    pub(crate) handler: unsafe extern "C" fn(*mut c_void, *const c_void),
    pub(crate) data: *mut c_void,
    /// The CPUs whose events the handler gets: `nr_cpu_ids` bits.
    pub(crate) cpus: *const c_ulong,
    pub(crate) tp: [*mut c_void; RTRS_TP_NR],
}
