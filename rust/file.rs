// SPDX-License-Identifier: GPL-2.0

//! Device files: what `MiscDevice` does not offer yet, and the one place
//! that says a file operation may sleep.
//!
//! A module's device implements [`TaskFile`]; [`FileOps`] is the
//! `MiscDevice` the VFS calls, and lends each operation the [`Sleepable`]
//! its task context proves: module code mints no token.

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
    iov::IovIterDest,
    miscdevice::{
        MiscDevice,
        MiscDeviceRegistration, //
    },
    prelude::*,
    seq_file::SeqFile,
    sync::poll::PollTable, //
};

use super::{
    context::Sleepable,
    ffi, //
};

/// `EPOLLIN | EPOLLRDNORM`: readable.
pub(crate) const POLL_READABLE: c_uint = 0x0001 | 0x0040;
/// `EPOLLHUP`: the other side is gone (e.g. the session stopped).
pub(crate) const POLL_HUP: c_uint = 0x0010;
/// `EPOLLERR`: an error (e.g. the device was unbound).
pub(crate) const POLL_ERR: c_uint = 0x0008;

/// A device's `poll()`: register on the wait queues that signal readiness
/// through `table`, and return the current `POLL_*` mask.
trait Poll {
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
fn setup<P: Poll>(file: &File) -> Result {
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
fn kiocb_nonblock<T: kernel::types::ForeignOwnable>(kiocb: &mut Kiocb<'_, T>) -> bool {
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
unsafe fn private<T>(file: &File) -> &T {
    // SAFETY: By the caller's guarantee `private_data` is the pointer of a
    // live `KBox<T>` (`KBox::into_foreign` gives the box's raw pointer).
    unsafe { &*(*file.as_ptr()).private_data.cast::<T>() }
}

/// The operations of a misc device's open file, each lent the task context
/// the VFS calls it in.
pub(crate) trait TaskFile: Sized + Send + Sync + 'static {
    /// `open()`: the open file's data. `misc` is the device's registration.
    fn open(
        ctx: &Sleepable,
        file: &File,
        misc: &MiscDeviceRegistration<FileOps<Self>>,
    ) -> Result<Self>;

    /// The last close of the file.
    fn release(ctx: &Sleepable, this: Self);

    /// `ioctl()`.
    fn ioctl(ctx: &Sleepable, this: &Self, cmd: u32, arg: usize) -> Result<isize>;

    /// `read()`, into `iov`; `nonblock` if the file was opened with
    /// `O_NONBLOCK`.
    fn read(
        ctx: &Sleepable,
        this: &Self,
        nonblock: bool,
        iov: &mut IovIterDest<'_>,
    ) -> Result<usize>;

    /// `poll()`/`select()`/`epoll`: registers on the wait queues of `table`
    /// and returns the `POLL_*` mask.
    fn poll(ctx: &Sleepable, this: &Self, file: &File, table: &PollTable<'_>) -> c_uint;

    /// `/proc/PID/fdinfo/FD`.
    fn fdinfo(ctx: &Sleepable, this: &Self, m: &SeqFile);
}

/// The `MiscDevice` of a [`TaskFile`]: what a module registers
/// (`MiscDeviceRegistration<FileOps<T>>`).
pub(crate) struct FileOps<T>(T);

#[vtable]
impl<T: TaskFile> MiscDevice for FileOps<T> {
    type Ptr = KBox<Self>;

    fn open(file: &File, misc: &MiscDeviceRegistration<Self>) -> Result<KBox<Self>> {
        // SAFETY: The VFS calls file operations in task context, which may
        // sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        // (If what follows fails, the VFS drops the operations `setup`
        // gave the file, and with them the module reference they hold.)
        setup::<Self>(file)?;
        // The allocation first: an open that fails after `T::open` would
        // drop `T` without `T::release`.
        let this = KBox::new_uninit(GFP_KERNEL)?;
        Ok(this.write(FileOps(T::open(ctx, file, misc)?)))
    }

    fn release(this: KBox<Self>, _file: &File) {
        // SAFETY: As in `open`.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::release(ctx, KBox::into_inner(this).0);
    }

    fn ioctl(this: &Self, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        // SAFETY: As in `open`.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::ioctl(ctx, &this.0, cmd, arg)
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let nonblock = kiocb_nonblock(&mut kiocb);
        // SAFETY: As in `open`.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::read(ctx, &kiocb.file().0, nonblock, iov)
    }

    fn show_fdinfo(this: &Self, m: &SeqFile, _file: &File) {
        // SAFETY: As in `open`.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::fdinfo(ctx, &this.0, m);
    }
}

impl<T: TaskFile> Poll for FileOps<T> {
    fn poll(file: &File, table: &PollTable<'_>) -> c_uint {
        // SAFETY: `setup` installs this hook only on files of this
        // `FileOps<T>` device (it refuses a second device type in the
        // module); the VFS calls `poll` only on a file whose `open`
        // returned, when the misc device has stored the box in
        // `private_data`.
        let this = unsafe { private::<Self>(file) };
        // SAFETY: As in `open`.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        T::poll(ctx, &this.0, file, table)
    }
}
