// SPDX-License-Identifier: GPL-2.0

//! rtlat: wake-up latency measurement on PREEMPT_RT, as a character device.
//!
//! `/dev/rtlat` (mode 0600) measures, per CPU and per timer activation, the
//! latency of the timer hard IRQ, of a SCHED_FIFO kernel thread woken from it
//! (timerlat's two samples) and, optionally, of a user thread blocked in the
//! device and its response time (cyclictest's number and timerlat's "Ret
//! user"), in one record per activation, with missed periods counted. The
//! user-space ABI is `include/uapi/linux/rtlat.h`; the design is described in
//! `Documentation/rtlat.rst`.
//!
//! One session at a time, owned by the file that configured it; closing that
//! file stops and frees it. `read()` on any other single file streams the
//! records.

use kernel::{
    ffi::c_uint,
    fs::{
        file::flags::O_NONBLOCK,
        File,
        Kiocb, //
    },
    iov::IovIterDest,
    miscdevice::{
        MiscDevice,
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    prelude::*,
    seq_file::SeqFile,
    seq_print,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        poll::PollTable,
        Arc, //
    },
    uaccess::{
        UserPtr,
        UserSlice, //
    },
};

#[path = "../rust/rtrs.rs"]
mod rtrs;

// The kernel-independent logic shared with the tool (lib/rtcore).
#[path = "../lib/rtcore/src/hist.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
#[allow(dead_code, reason = "shared with the tool, which uses the rest")]
mod hist;
#[path = "../lib/rtcore/src/uapi.rs"]
#[expect(
    unreachable_pub,
    reason = "public API of the host crate, private in a module"
)]
#[allow(dead_code, reason = "shared with the tool, which uses the rest")]
mod uapi;

mod session;

use session::Session;
use uapi::{
    ioc,
    Config,
    Stats,
    UapiError, //
};

module! {
    type: RtlatModule,
    name: "rtlat",
    authors: ["The rtrs developers"],
    description: "Wake-up latency measurement device for PREEMPT_RT (/dev/rtlat)",
    license: "GPL",
}

/// The device: the registration and the one session.
#[pin_data]
struct RtlatModule {
    #[pin]
    misc: MiscDeviceRegistration<RtlatFile>,
    _hotplug: rtrs::cpuhp::Registration<RtlatFile>,
}

/// The session and who owns it, shared by every open file.
struct Shared {
    session: Option<Arc<Session>>,
    /// File id of the owner (the file that configured the session).
    owner: u64,
    /// File id of the streaming reader, 0 if none.
    reader: u64,
}

kernel::sync::global_lock! {
    // SAFETY: Initialised in the module initialiser before the device exists.
    unsafe(uninit) static SHARED: Mutex<Shared> = Shared { session: None, owner: 0, reader: 0 };
}

/// Ids of open files.
static NEXT_ID: Atomic<u64> = Atomic::new(1);

impl kernel::InPlaceModule for RtlatModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: Called once, before anything can use the lock.
        unsafe { SHARED.init() };
        try_pin_init!(Self {
            _hotplug: rtrs::cpuhp::Registration::new(c"rtlat:online")?,
            misc <- MiscDeviceRegistration::register(MiscDeviceOptions { name: c"rtlat" }),
        })
    }
}

/// One open file of /dev/rtlat.
struct RtlatFile {
    id: u64,
}

fn uapi_err(e: UapiError) -> Error {
    match e {
        UapiError::Size | UapiError::Version | UapiError::Invalid => EINVAL,
    }
}

impl RtlatFile {
    fn session(&self) -> Option<Arc<Session>> {
        SHARED.lock().session.clone()
    }

    fn config(&self, arg: usize) -> Result<isize> {
        if !rtrs::preempt::capable_rt() {
            return Err(EPERM);
        }
        let mut buf = [0u8; uapi::CONFIG_SIZE];
        UserSlice::new(UserPtr::from_addr(arg), buf.len())
            .reader()
            .read_slice(&mut buf)?;
        let config = Config::decode(&buf).map_err(uapi_err)?;
        let old = {
            let mut sh = SHARED.lock();
            if let Some(s) = &sh.session {
                if sh.owner != self.id || s.state() == uapi::STATE_RUNNING {
                    return Err(EBUSY);
                }
            }
            // Allocate everything now, outside any atomic context.
            let new = Session::new(config)?;
            sh.owner = self.id;
            sh.session.replace(new)
        };
        if let Some(old) = old {
            old.stop(uapi::STOP_USER);
        }
        Ok(0)
    }

    fn owned_session(&self) -> Result<Arc<Session>> {
        let sh = SHARED.lock();
        match &sh.session {
            None => Err(EINVAL),
            Some(_) if sh.owner != self.id => Err(EBUSY),
            Some(s) => Ok(s.clone()),
        }
    }

    fn stats(&self, arg: usize) -> Result<isize> {
        let mut buf = [0u8; uapi::STATS_SIZE];
        let (mut reader, mut writer) =
            UserSlice::new(UserPtr::from_addr(arg), buf.len()).reader_writer();
        reader.read_slice(&mut buf)?;
        let mut st = Stats::decode_request(&buf).map_err(uapi_err)?;
        let session = self.session().ok_or(EINVAL)?;
        let cpu = session.cpu(st.cpu).ok_or(EINVAL)?;
        let stage = &cpu.stats[st.stage as usize];
        let sum = stage.summary();
        let buckets = stage.buckets()?;
        let k = cpu.ring.counters();
        st.hist_layout = uapi::HIST_LAYOUT;
        st.count = sum.count;
        st.min = if sum.count == 0 { 0 } else { sum.min };
        st.max = sum.max;
        st.sum = sum.sum;
        st.max_seq = sum.max_seq;
        st.max_time = sum.max_time;
        st.missed = cpu.missed.load(Relaxed);
        st.produced = k.produced;
        st.delivered = k.delivered;
        st.dropped = k.dropped;
        for (p, &ppm) in st.percentiles.iter_mut().zip(hist::PERCENTILES_PPM.iter()) {
            *p = hist::percentile(&buckets, ppm, sum.max).unwrap_or(0);
        }
        if st.buckets_ptr != 0 {
            let n = (st.nr_buckets as usize).min(hist::BUCKETS);
            let mut out =
                UserSlice::new(UserPtr::from_addr(st.buckets_ptr as usize), n * 8).writer();
            for &b in buckets.iter().take(n) {
                out.write_slice(&b.to_ne_bytes())?;
            }
            st.nr_buckets = n as u32;
        } else {
            st.nr_buckets = 0;
        }
        st.encode(&mut buf);
        writer.write_slice(&buf)?;
        Ok(0)
    }
}

#[vtable]
impl MiscDevice for RtlatFile {
    type Ptr = KBox<Self>;

    fn open(file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<KBox<Self>> {
        rtrs::file::setup::<RtlatFile>(file)?;
        Ok(KBox::new(
            RtlatFile {
                id: NEXT_ID.fetch_add(1, Relaxed),
            },
            GFP_KERNEL,
        )?)
    }

    fn release(this: KBox<Self>, _file: &File) {
        let owned = {
            let mut sh = SHARED.lock();
            if sh.reader == this.id {
                sh.reader = 0;
            }
            if sh.owner == this.id {
                sh.owner = 0;
                sh.session.take()
            } else {
                None
            }
        };
        // Closing the owner stops the session and frees everything.
        if let Some(s) = owned {
            s.stop(uapi::STOP_USER);
        }
    }

    fn ioctl(this: &Self, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            ioc::CONFIG => this.config(arg),
            ioc::START => {
                if !rtrs::preempt::capable_rt() {
                    return Err(EPERM);
                }
                let s = this.owned_session()?;
                s.start()?;
                Ok(0)
            }
            ioc::STOP => {
                let s = this.owned_session()?;
                s.stop(uapi::STOP_USER);
                Ok(0)
            }
            ioc::RESET => {
                this.owned_session()?.reset();
                Ok(0)
            }
            ioc::STATUS => {
                let st = this.session().map(|s| s.status()).unwrap_or_default();
                let mut buf = [0u8; uapi::STATUS_SIZE];
                st.encode(&mut buf);
                UserSlice::new(UserPtr::from_addr(arg), buf.len())
                    .writer()
                    .write_slice(&buf)?;
                Ok(0)
            }
            ioc::STATS => this.stats(arg),
            ioc::USER_WAIT => {
                let s = this.session().ok_or(EINVAL)?;
                let rec = s.user_wait()?;
                let mut buf = [0u8; uapi::RECORD_SIZE];
                rec.encode(&mut buf);
                UserSlice::new(UserPtr::from_addr(arg), buf.len())
                    .writer()
                    .write_slice(&buf)?;
                Ok(0)
            }
            _ => Err(ENOTTY),
        }
    }

    fn read_iter(mut kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        let me = kiocb.file();
        let id = me.id;
        let nonblock = kiocb_nonblock(&mut kiocb);
        if iov.len() < uapi::RECORD_SIZE {
            return Err(EINVAL);
        }
        let session = {
            let mut sh = SHARED.lock();
            if sh.reader != 0 && sh.reader != id {
                return Err(EBUSY);
            }
            let s = sh.session.clone().ok_or(EINVAL)?;
            sh.reader = id;
            s
        };
        let _serial = session.read_lock.lock();
        loop {
            let seen = session.generation();
            let mut n = 0;
            let mut buf = [0u8; uapi::RECORD_SIZE];
            'fill: while iov.len() >= uapi::RECORD_SIZE {
                let mut any = false;
                for cpu in session.cpus.iter() {
                    if iov.len() < uapi::RECORD_SIZE {
                        break 'fill;
                    }
                    // SAFETY: `read_lock` makes this the only consumer.
                    if let Some(rec) = unsafe { cpu.ring.pop() } {
                        rec.encode(&mut buf);
                        if iov.copy_to_iter(&buf) != buf.len() {
                            return if n > 0 { Ok(n) } else { Err(EFAULT) };
                        }
                        n += buf.len();
                        any = true;
                    }
                }
                if !any {
                    break;
                }
            }
            if n > 0 {
                return Ok(n);
            }
            // The stream ends once the session has been stopped by its owner
            // (STOP or close) and every record was read.
            if session.finished() && session.cpus.iter().all(|c| c.ring.is_empty()) {
                return Ok(0);
            }
            if nonblock {
                return Err(EAGAIN);
            }
            if session.wait_readable(seen) {
                return Err(ERESTARTSYS);
            }
        }
    }

    fn show_fdinfo(_this: &Self, m: &SeqFile, _file: &File) {
        let Some(session) = SHARED.lock().session.clone() else {
            seq_print!(m, "rtlat: no session\n");
            return;
        };
        let st = session.status();
        seq_print!(
            m,
            "rtlat: state {} stop_reason {} period_ns {} produced {} delivered {} dropped {} missed {}\n",
            st.state,
            st.stop_reason,
            session.config.period_ns,
            st.produced,
            st.delivered,
            st.dropped,
            st.missed
        );
        for cpu in session.cpus.iter() {
            for (stage, s) in cpu.stats.iter().enumerate() {
                let sum = s.summary();
                if sum.count == 0 {
                    continue;
                }
                let b = s.buckets();
                let pct = |ppm| {
                    b.as_ref()
                        .ok()
                        .and_then(|b| hist::percentile(b, ppm, sum.max))
                        .unwrap_or(0)
                };
                seq_print!(
                    m,
                    "cpu {} {}: count {} min {} avg {} max {} p50 {} p99 {} p99.9 {} p99.99 {} missed {} dropped {}\n",
                    cpu.cpu,
                    uapi::STAGE_NAMES[stage],
                    sum.count,
                    sum.min,
                    sum.mean(),
                    sum.max,
                    pct(500_000),
                    pct(990_000),
                    pct(999_000),
                    pct(999_900),
                    cpu.missed.load(Relaxed),
                    cpu.ring.counters().dropped
                );
            }
        }
    }
}

impl rtrs::cpuhp::CpuHotplug for RtlatFile {
    fn offline(cpu: u32) {
        let session = SHARED.lock().session.clone();
        if let Some(s) = session {
            s.cpu_offline(cpu);
        }
    }
}

impl rtrs::file::Poll for RtlatFile {
    fn poll(file: &File, table: &PollTable<'_>) -> c_uint {
        let Some(session) = SHARED.lock().session.clone() else {
            return rtrs::file::POLL_HUP;
        };
        table.register_wait(file, &session.readable);
        let mut mask = 0;
        if session.cpus.iter().any(|c| !c.ring.is_empty()) {
            mask |= rtrs::file::POLL_READABLE;
        }
        if session.finished() {
            // End of the stream: read() returns what is left, then 0.
            mask |= rtrs::file::POLL_READABLE | rtrs::file::POLL_HUP;
        }
        mask
    }
}

/// True if the file was opened with `O_NONBLOCK`.
fn kiocb_nonblock(kiocb: &mut Kiocb<'_, KBox<RtlatFile>>) -> bool {
    // SAFETY: `as_raw` is the live kiocb of this call; `ki_filp` is its file.
    unsafe {
        let k = kiocb.as_raw();
        ((*(*k).ki_filp).f_flags & O_NONBLOCK) != 0
    }
}
