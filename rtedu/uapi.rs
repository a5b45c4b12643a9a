// SPDX-License-Identifier: GPL-2.0

//! The device's own ioctls (`include/uapi/linux/rtedu.h`): their
//! structures, numbers, and the `size`/`version` check of every request.

use kernel::{
    ioctl::{
        _IOR,
        _IOWR, //
    },
    prelude::*,
    transmute::{
        AsBytes,
        FromBytes, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

/// `struct rtedu_info`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(crate) struct Info {
    pub(crate) size: u32,
    pub(crate) version: u32,
    pub(crate) instance: u32,
    pub(crate) ident: u32,
    pub(crate) pci_domain: u32,
    pub(crate) pci_devid: u32,
    pub(crate) irq: u32,
    pub(crate) irq_type: u32,
    pub(crate) irq_thread_tid: i32,
    pub(crate) irq_thread_prio: u32,
    pub(crate) dma_bits: u32,
    pub(crate) reserved: u32,
    pub(crate) irqs: u64,
    pub(crate) spurious: u64,
}

/// `struct rtedu_factorial`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(crate) struct Factorial {
    pub(crate) size: u32,
    pub(crate) version: u32,
    pub(crate) n: u32,
    pub(crate) result: u32,
}

/// `struct rtedu_dma`.
#[repr(C)]
#[derive(Default, Clone, Copy)]
pub(crate) struct Dma {
    pub(crate) size: u32,
    pub(crate) version: u32,
    pub(crate) buf_ptr: u64,
    pub(crate) len: u32,
    pub(crate) reserved: u32,
    pub(crate) to_dev_ns: u64,
    pub(crate) from_dev_ns: u64,
}

// SAFETY: Plain integers with no padding (every field is naturally aligned
// and the sizes add up), so every byte pattern is valid and every byte is
// initialised.
unsafe impl FromBytes for Info {}
// SAFETY: As above.
unsafe impl AsBytes for Info {}
// SAFETY: As above.
unsafe impl FromBytes for Factorial {}
// SAFETY: As above.
unsafe impl AsBytes for Factorial {}
// SAFETY: As above.
unsafe impl FromBytes for Dma {}
// SAFETY: As above.
unsafe impl AsBytes for Dma {}

pub(crate) const VERSION: u32 = 1;
const IOC_MAGIC: u32 = 0xb8;
pub(crate) const IOC_INFO: u32 = _IOR::<Info>(IOC_MAGIC, 1);
pub(crate) const IOC_FACTORIAL: u32 = _IOWR::<Factorial>(IOC_MAGIC, 2);
pub(crate) const IOC_DMA: u32 = _IOWR::<Dma>(IOC_MAGIC, 3);

/// Reads a `size`/`version`-headed structure from user space and checks both.
pub(crate) fn read_request<T: FromBytes + AsBytes>(arg: usize) -> Result<T> {
    let v: T = UserSlice::new(UserPtr::from_addr(arg), size_of::<T>())
        .reader()
        .read()?;
    let head = v.as_bytes();
    let size = u32::from_ne_bytes([head[0], head[1], head[2], head[3]]);
    let version = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]);
    if size as usize != size_of::<T>() || version != VERSION {
        return Err(EINVAL);
    }
    Ok(v)
}

pub(crate) fn write_answer<T: AsBytes>(arg: usize, v: &T) -> Result<isize> {
    UserSlice::new(UserPtr::from_addr(arg), size_of::<T>())
        .writer()
        .write(v)?;
    Ok(0)
}
