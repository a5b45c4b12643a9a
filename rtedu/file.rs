// SPDX-License-Identifier: GPL-2.0

//! An open file of `/dev/rtedu<N>` ([`RteduFile`]): the device's ioctls,
//! and the measuring protocol's ioctls, `read()`, `poll()` and fdinfo.

use kernel::{
    ffi::c_uint,
    fs::File,
    iov::IovIterDest,
    miscdevice::MiscDeviceRegistration,
    prelude::*,
    seq_file::SeqFile,
    sync::{
        atomic::Relaxed,
        poll::PollTable,
        Arc, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

use crate::{
    regs,
    rtrs::{
        self,
        context::Sleepable,
        file::{
            FileOps,
            TaskFile, //
        },
        measure::{
            self,
            Access, //
        },
    },
    session::EduInstance,
    uapi::{
        read_request,
        write_answer,
        Dma,
        Factorial,
        Info,
        IOC_DMA,
        IOC_FACTORIAL,
        IOC_INFO,
        VERSION, //
    },
    INSTANCES, NAMES, NEXT_ID,
};

/// One open file of `/dev/rtedu<N>`.
pub(crate) struct RteduFile {
    id: u64,
    /// Whether it may configure and start (`measure::Access`).
    access: Access,
    inst: Arc<EduInstance>,
}

impl RteduFile {
    fn info(&self) -> Info {
        let i = &self.inst;
        Info {
            size: size_of::<Info>() as u32,
            version: VERSION,
            instance: i.index,
            ident: i.ident,
            pci_domain: i.pci_domain,
            pci_devid: i.pci_devid,
            irq: i.irq,
            irq_type: i.irq_type,
            irq_thread_tid: i.irq_thread.tid(),
            irq_thread_prio: i.irq_thread.applied_priority(),
            dma_bits: i.dma_bits,
            reserved: 0,
            irqs: i.irqs.load(Relaxed),
            spurious: i.spurious.load(Relaxed),
        }
    }

    fn dma(&self, ctx: &Sleepable, arg: usize) -> Result<isize> {
        let mut req: Dma = read_request(arg)?;
        let len = req.len as usize;
        if len == 0 || len > regs::DMA_BUF_SIZE || req.reserved != 0 {
            return Err(EINVAL);
        }
        let user = UserSlice::new(UserPtr::from_addr(req.buf_ptr as usize), len);
        let (reader, mut writer) = user.reader_writer();
        let mut data = KVec::with_capacity(len, GFP_KERNEL)?;
        reader.read_all(&mut data, GFP_KERNEL)?;
        let (to_dev, from_dev) = self.inst.dma_round_trip(ctx, &mut data)?;
        writer.write_slice(&data)?;
        req.to_dev_ns = to_dev;
        req.from_dev_ns = from_dev;
        write_answer(arg, &req)
    }
}

impl TaskFile for RteduFile {
    fn open(
        _ctx: &Sleepable,
        file: &File,
        misc: &MiscDeviceRegistration<FileOps<Self>>,
    ) -> Result<Self> {
        // SAFETY: `misc` is a registered misc device; its name is one of
        // `NAMES`.
        let name = unsafe { (*misc.as_raw()).name };
        let inst = {
            let instances = INSTANCES.lock();
            NAMES
                .iter()
                .position(|n| n.as_char_ptr() == name)
                .and_then(|i| instances[i].clone())
                .ok_or(ENODEV)?
        };
        if inst.gone() {
            return Err(ENODEV);
        }
        Ok(RteduFile {
            id: NEXT_ID.fetch_add(1, Relaxed),
            access: Access::of(file),
            inst,
        })
    }

    fn release(ctx: &Sleepable, this: Self) {
        measure::release(ctx, &this.inst.sessions, this.id);
    }

    fn ioctl(ctx: &Sleepable, this: &Self, cmd: u32, arg: usize) -> Result<isize> {
        if this.inst.gone() {
            return Err(ENODEV);
        }
        match cmd {
            IOC_INFO => write_answer(arg, &this.info()),
            IOC_FACTORIAL => {
                let mut req: Factorial = read_request(arg)?;
                req.result = this.inst.factorial(ctx, req.n)?;
                write_answer(arg, &req)
            }
            IOC_DMA => this.dma(ctx, arg),
            _ => measure::ioctl(
                ctx,
                &this.inst.sessions,
                &this.inst,
                (this.id, this.access),
                cmd,
                arg,
            ),
        }
    }

    fn read(
        ctx: &Sleepable,
        this: &Self,
        nonblock: bool,
        iov: &mut IovIterDest<'_>,
    ) -> Result<usize> {
        // Not refused once the device is gone: the session's queued
        // records are still read, then `ENODEV` (`Source::gone`).
        let room = iov.len() >= rtrs::uapi::RECORD_SIZE;
        match measure::read(ctx, &this.inst.sessions, this.id, nonblock, iov) {
            // No session to read (`EINVAL` with room for a record), on a
            // device that is gone.
            Err(e) if e == EINVAL && room && this.inst.gone() => Err(ENODEV),
            r => r,
        }
    }

    fn poll(ctx: &Sleepable, this: &Self, file: &File, table: &PollTable<'_>) -> c_uint {
        // Readable while the session's queued records last, gone or not.
        let mask = measure::poll(ctx, &this.inst.sessions, file, this.id, table);
        if this.inst.gone() {
            // With or without a session to read.
            mask | rtrs::file::POLL_ERR | rtrs::file::POLL_HUP
        } else {
            mask
        }
    }

    fn fdinfo(ctx: &Sleepable, this: &Self, m: &SeqFile) {
        measure::fdinfo(ctx, &this.inst.sessions, this.id, m, "rtedu");
    }
}
