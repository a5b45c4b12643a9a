// SPDX-License-Identifier: GPL-2.0

//! Device files: what `MiscDevice` does not offer yet.

use kernel::{
    bindings,
    ffi::{
        c_uint,
        c_void, //
    },
    fs::{
        file::flags::O_NONBLOCK,
        File,
        Kiocb, //
    },
    prelude::*,
    sync::poll::PollTable, //
};

use super::ffi;

/// `EPOLLIN | EPOLLRDNORM`: readable.
pub(crate) const POLL_READABLE: c_uint = 0x0001 | 0x0040;
/// `EPOLLHUP`: the other side is gone (e.g. the session stopped).
pub(crate) const POLL_HUP: c_uint = 0x0010;
/// `EPOLLERR`: an error (e.g. the device was unbound).
pub(crate) const POLL_ERR: c_uint = 0x0008;

/// A device's `poll()`: register on the wait queues that signal readiness
/// through `table`, and return the current `POLL_*` mask.
pub(crate) trait Poll {
    /// Called for `poll()`/`select()`/`epoll` on `file`.
    fn poll(file: &File, table: &PollTable<'_>) -> c_uint;
}

/// The C `poll` entry point for a [`Poll`] implementation.
///
/// # Safety
///
/// Called by the VFS with a valid open file and poll table.
///
/// Its type is the C hook's, `__poll_t (*)(struct file *, struct
/// poll_table_struct *)`, argument for argument: with kernel control-flow
/// integrity (`CONFIG_CFI`) the VFS's indirect call checks the callee's
/// type, and a callback taking `void *` stops the kernel.
unsafe extern "C" fn poll_trampoline<P: Poll>(
    file: *mut bindings::file,
    table: *mut bindings::poll_table_struct,
) -> bindings::__poll_t {
    // SAFETY: The VFS passes a valid file, alive for the call.
    let file = unsafe { File::from_raw_file(file) };
    // SAFETY: The VFS passes a valid poll table (or NULL, which `poll_wait`
    // accepts), alive for the call.
    let table = unsafe { PollTable::from_raw(table) };
    P::poll(file, &table)
}

/// Sets `file` up from `MiscDevice::open`: the VFS holds the module while
/// the file is open (so `rmmod` is refused until it is closed; Linux 7.2's
/// `MiscDevice` does not arrange that) and, with `P`, `poll()` works.
pub(crate) fn setup<P: Poll>(file: &File) -> Result {
    // The trampoline, with the C `poll` hook's type, as the shim takes it.
    let poll: unsafe extern "C" fn(
        *mut bindings::file,
        *mut bindings::poll_table_struct,
    ) -> bindings::__poll_t = poll_trampoline::<P>;
    // SAFETY: `file` is a valid file being opened; `poll` points to a
    // function of the C `poll` hook's type.
    kernel::error::to_result(unsafe {
        ffi::rtrs_file_setup(file.as_ptr().cast(), poll as *const c_void)
    })
}

/// True if the file of a `read_iter`/`write_iter` call was opened with
/// `O_NONBLOCK`.
pub(crate) fn kiocb_nonblock<T: kernel::types::ForeignOwnable>(kiocb: &mut Kiocb<'_, T>) -> bool {
    // SAFETY: `as_raw` is the live kiocb of this call; `ki_filp` is its file.
    unsafe {
        let k = kiocb.as_raw();
        ((*(*k).ki_filp).f_flags & O_NONBLOCK) != 0
    }
}

/// The open-file data of a `MiscDevice` whose `Ptr` is `KBox<T>`, for
/// callbacks that only get the file (such as [`Poll::poll`]).
///
/// # Safety
///
/// `file` is a file of a `MiscDevice<Ptr = KBox<T>>` whose `open` has
/// returned (the misc device stores the box in `private_data`), and it is
/// not released while the reference is used.
pub(crate) unsafe fn private<T>(file: &File) -> &T {
    // SAFETY: By the caller's guarantee `private_data` is the pointer of a
    // live `KBox<T>` (`KBox::into_foreign` gives the box's raw pointer).
    unsafe { &*(*file.as_ptr()).private_data.cast::<T>() }
}
