// SPDX-License-Identifier: GPL-2.0

//! An open file of `/dev/rtedu<N>` ([`RteduFile`]): the device's ioctls,
//! and the measuring protocol's ioctls, `read()`, `poll()` and fdinfo.

use kernel::{
    ffi::c_uint,
    fs::{
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
    instance::Instance,
    regs,
    rtrs::{
        self,
        context::Sleepable,
        measure, //
    },
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
    inst: Arc<Instance>,
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

#[vtable]
impl MiscDevice for RteduFile {
    type Ptr = KBox<Self>;

    fn open(file: &File, misc: &MiscDeviceRegistration<Self>) -> Result<KBox<Self>> {
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
        rtrs::file::setup::<RteduFile>(file)?;
        Ok(KBox::new(
            RteduFile {
                id: NEXT_ID.fetch_add(1, Relaxed),
                inst,
            },
            GFP_KERNEL,
        )?)
    }

    fn release(this: KBox<Self>, _file: &File) {
        // SAFETY: File operations run in task context and may sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        measure::release(ctx, &this.inst.sessions, this.id);
    }

    fn ioctl(this: &Self, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        if this.inst.gone() {
            return Err(ENODEV);
        }
        // SAFETY: File operations run in task context and may sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        match cmd {
            IOC_INFO => write_answer(arg, &this.info()),
            IOC_FACTORIAL => {
                let mut req: Factorial = read_request(arg)?;
                req.result = this.inst.factorial(ctx, req.n)?;
                write_answer(arg, &req)
            }
            IOC_DMA => this.dma(ctx, arg),
            _ => measure::ioctl(ctx, &this.inst.sessions, &this.inst, this.id, cmd, arg),
        }
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let nonblock = rtrs::file::kiocb_nonblock(&mut kiocb);
        let me = kiocb.file();
        // SAFETY: File operations run in task context and may sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        // Not refused once the device is gone: the session's queued
        // records are still read, then `ENODEV` (`Source::gone`).
        let room = iov.len() >= rtrs::uapi::RECORD_SIZE;
        match measure::read(ctx, &me.inst.sessions, me.id, nonblock, iov) {
            // No session to read (`EINVAL` with room for a record), on a
            // device that is gone.
            Err(e) if e == EINVAL && room && me.inst.gone() => Err(ENODEV),
            r => r,
        }
    }

    fn show_fdinfo(this: &Self, m: &SeqFile, _file: &File) {
        // SAFETY: File operations run in task context and may sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        measure::fdinfo(ctx, &this.inst.sessions, this.id, m, "rtedu");
    }
}

impl rtrs::file::Poll for RteduFile {
    fn poll(file: &File, table: &PollTable<'_>) -> c_uint {
        // SAFETY: `poll` is only called on open files of this device.
        let me = unsafe { rtrs::file::private::<RteduFile>(file) };
        // SAFETY: File operations run in task context and may sleep.
        let ctx = unsafe { Sleepable::assume_sleepable() };
        // Readable while the session's queued records last, gone or not.
        let mask = measure::poll(ctx, &me.inst.sessions, file, me.id, table);
        if me.inst.gone() {
            // With or without a session to read.
            mask | rtrs::file::POLL_ERR | rtrs::file::POLL_HUP
        } else {
            mask
        }
    }
}
