// SPDX-License-Identifier: GPL-2.0

//! Probes on the kernel's scheduler and interrupt tracepoints: what ran on
//! each CPU, for [`blame`](super::blame).
//!
//! [`Probes::attach`] registers, through the C shim, one probe on each of
//! `sched_switch`, `irq_handler_entry`/`exit`, `softirq_entry`/`exit` and
//! `hrtimer_expire_entry`/`exit`, found by name (the core kernel exports
//! none of them to modules), and hands every event to
//! [`ProbeHandler::event`] as a [`blame::Event`](super::blame::Event), on
//! the CPU it happened on, if that is one of the CPUs it was attached for
//! (a probe on another CPU returns at once, before any other work), with
//! local interrupts off: tracepoint probes run
//! under SRCU-fast and may be preempted on PREEMPT_RT, so the shim turns
//! interrupts off around the handler, which then keeps per-CPU state in a
//! [`PerCpuIrq`](super::percpu::PerCpuIrq) without a lock. Dropping the
//! [`Probes`] unregisters them and waits until no probe runs, so the
//! handler outlives every call. Nothing of this exists until attached: a
//! session that does not ask for it costs nothing.
//!
//! The handler runs for every context switch and interrupt of the machine:
//! it must be short and bounded, take no lock but raw ones, allocate
//! nothing and wake no one.

use kernel::{
    alloc::flags::GFP_KERNEL_ACCOUNT,
    ffi::{
        c_char,
        c_ulong,
        c_void, //
    },
    prelude::*,
    sync::Arc,
    types::Opaque,
};

use super::{
    blame::{
        Event,
        Kind,
        Source,
        NAME_LEN,
        SOFTIRQ_NAMES, //
    },
    context::{
        IrqsOff,
        Sleepable, //
    },
    ffi::{
        self,
        RawEvent,
        RawProbes, //
    },
};

/// What receives the events of [`Probes`].
pub(crate) trait ProbeHandler: Send + Sync + 'static {
    /// One event at `at` (ns, CLOCK_MONOTONIC) on the CPU this runs on,
    /// with local interrupts off (`irqs`, which names the CPU); a CPU's
    /// events come in the order they happened. Any context (hard IRQ
    /// included): short, bounded, no allocation, no sleeping lock, no
    /// wake-up.
    fn event(&self, irqs: &IrqsOff, at: i64, event: Event);
}

/// The probes of one handler, registered on every tracepoint of this
/// module.
///
/// # Invariants
///
/// `raw` was registered by `rtrs_probes_register` with `raw.data` pointing
/// to the `T` of `handler` and `raw.cpus` to the bits of `cpus`, and stays
/// registered until dropped.
pub(crate) struct Probes<T: ProbeHandler> {
    /// Read by the probes on every CPU while registered: only ever reached
    /// through its raw pointer.
    raw: KBox<Opaque<RawProbes>>,
    /// The CPUs whose events reach the handler: a bitmap of `nr_cpu_ids`
    /// bits, read by the probes.
    cpus: KVec<c_ulong>,
    handler: Arc<T>,
}

// SAFETY: `raw` is only read by the probes and the shim; `T: Send + Sync`.
unsafe impl<T: ProbeHandler> Send for Probes<T> {}
// SAFETY: As above; `&Probes` gives nothing but `&T`.
unsafe impl<T: ProbeHandler> Sync for Probes<T> {}

impl<T: ProbeHandler> Probes<T> {
    /// Registers the probes, handing the events of `cpus` to `handler`
    /// from now on; on any other CPU a probe returns at once. All or
    /// nothing: `EINVAL` for a CPU past `nr_cpu_ids`, `EOPNOTSUPP` on a
    /// kernel without `CONFIG_TRACEPOINTS`, `ENOENT` if a tracepoint is
    /// missing, or the registration's error. Its memory is charged to the
    /// caller's memory cgroup. Sleeps.
    pub(crate) fn attach(handler: Arc<T>, cpus: &[u32], _ctx: &Sleepable) -> Result<Self> {
        let nr = kernel::cpu::nr_cpu_ids() as usize;
        let bits = c_ulong::BITS as usize;
        let mut map = KVec::with_capacity(nr.div_ceil(bits), GFP_KERNEL_ACCOUNT)?;
        map.resize(nr.div_ceil(bits), 0, GFP_KERNEL_ACCOUNT)?;
        for &cpu in cpus {
            let cpu = cpu as usize;
            if cpu >= nr {
                return Err(EINVAL);
            }
            map[cpu / bits] |= 1 << (cpu % bits);
        }
        let raw = KBox::new(
            Opaque::new(RawProbes {
                handler: trampoline::<T>,
                data: core::ptr::from_ref::<T>(&handler).cast_mut().cast(),
                cpus: map.as_ptr(),
                tp: [core::ptr::null_mut(); ffi::RTRS_TP_NR],
            }),
            GFP_KERNEL_ACCOUNT,
        )?;
        // SAFETY: `raw` is boxed, so stays where it is until dropped, which
        // unregisters first; `data` points to the handler, kept alive by
        // the `Arc` beside it for as long, and `cpus` to the `nr_cpu_ids`
        // bits of `map`, kept beside them and never changed.
        kernel::error::to_result(unsafe { ffi::rtrs_probes_register(raw.get()) })?;
        // INVARIANT: registered just above.
        Ok(Self {
            raw,
            cpus: map,
            handler,
        })
    }

    /// The handler.
    pub(crate) fn handler(&self) -> &Arc<T> {
        &self.handler
    }
}

impl<T: ProbeHandler> Drop for Probes<T> {
    /// Unregisters the probes and waits until none runs any more. Sleeps:
    /// drop it in task context.
    fn drop(&mut self) {
        // SAFETY: Registered (type invariant); afterwards no probe uses
        // `raw` or the handler, which are then freed.
        unsafe { ffi::rtrs_probes_unregister(self.raw.get()) };
    }
}

/// Writes the name of the code at `addr` into `buf`, NUL-terminated and
/// padded: `module:symbol` for a module's code, `symbol` for the kernel's
/// (`+offset/size` after it if `with_offset`; cut to fit), `?` where
/// kallsyms has none (never the address). For reports: the name of an
/// hrtimer's callback ([`Kind::Timer`]'s `aux`).
pub(crate) fn symbol_name(addr: u64, with_offset: bool, buf: &mut [u8], _ctx: &Sleepable) {
    buf.fill(0);
    if buf.is_empty() {
        return;
    }
    // SAFETY: `buf` is writable for `buf.len()` bytes, more than zero; the
    // shim writes at most that many, NUL included, and only reads kallsyms.
    unsafe {
        ffi::rtrs_symbol_name(
            addr as kernel::ffi::c_ulong,
            with_offset,
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
}

/// A name of at most [`NAME_LEN`] bytes from the NUL-terminated `p` (none
/// if null).
///
/// # Safety
///
/// `p` is null or points to a NUL-terminated string, or to at least
/// [`NAME_LEN`] readable bytes.
unsafe fn name_of(p: *const c_char) -> [u8; NAME_LEN] {
    let mut name = [0u8; NAME_LEN];
    if p.is_null() {
        return name;
    }
    for (i, b) in name.iter_mut().enumerate() {
        // SAFETY: Within the string or its first `NAME_LEN` bytes, by the
        // caller's contract: the loop ends at the NUL.
        let c = unsafe { *p.add(i) };
        if c == 0 {
            break;
        }
        *b = c;
    }
    name
}

/// The shim's call of the handler.
///
/// # Safety
///
/// `data` is the `&T` of a registered [`Probes<T>`], `ev` a valid
/// [`RawEvent`]
/// whose `name` is null or a string as [`name_of`] needs; called on the
/// event's CPU with local interrupts off.
unsafe extern "C" fn trampoline<T: ProbeHandler>(data: *mut c_void, ev: *const c_void) {
    // SAFETY: By this function's contract.
    let (handler, ev) = unsafe { (&*data.cast::<T>(), &*ev.cast::<RawEvent>()) };
    // SAFETY: The shim turned interrupts off around this call.
    let irqs = unsafe { IrqsOff::assume_off() };
    let Some(kind) = Kind::from_raw(ev.kind) else {
        return;
    };
    let event = match ev.kind_of_event {
        ffi::RTRS_TP_EXIT => Event::Exit(kind, ev.id),
        t => {
            let mut source = match kind {
                // (The shim passes no name: the vector's is known here.)
                Kind::Softirq => {
                    let name = usize::try_from(ev.id)
                        .ok()
                        .and_then(|v| SOFTIRQ_NAMES.get(v))
                        .map_or(&b"?"[..], |n| n.as_bytes());
                    Source::new(kind, ev.id, name)
                }
                // SAFETY: `name` is as `name_of` needs, by this function's
                // contract.
                _ => Source::new(kind, ev.id, &unsafe { name_of(ev.name) }),
            };
            source.policy = ev.policy;
            source.prio = ev.prio;
            source.aux = ev.aux;
            if t == ffi::RTRS_TP_SWITCH {
                Event::Switch(source)
            } else {
                Event::Enter(source)
            }
        }
    };
    handler.event(irqs, ev.at, event);
}
