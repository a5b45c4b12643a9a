// SPDX-License-Identifier: GPL-2.0

//! `struct rtlat_blame` ([`Blame`], `RTLAT_IOC_BLAME`): one CPU's late
//! activations explained, the request that asks for it, and its two
//! layouts.

use super::{
    super::blame,
    wire::{
        header,
        Wr, //
    },
    BlameEntry,
    UapiError,
    BLAME_ENTRY_SIZE,
    BLAME_NAME_LEN,
    VERSION, //
};

/// Bytes of a frame's name in [`BlameWorst::stack`]: `module:symbol+off/size`.
pub const BLAME_FRAME_LEN: usize = 64;

/// The hrtimer callbacks an answer names whole ([`Blame::long_names`]):
/// the first distinct ones its entries name.
pub const BLAME_LONG_NAMES: usize = 16;
/// Bytes of a whole name in [`Blame::long_names`]: `module:symbol` with
/// kallsyms' longest symbol (`KSYM_NAME_LEN`, 512 bytes with its NUL) and
/// module name (55 bytes), NUL-padded.
pub const BLAME_LONG_NAME_LEN: usize = 576;
/// Byte size of [`Blame`] before the whole names (`RTLAT_IOC_BLAME_V1`).
pub const BLAME_SIZE_V1: usize = 8
    + 4
    + 4
    + 3 * 8
    + 4 * 4
    + 6 * 8
    + (blame::CULPRITS + blame::IRQ_PARTS + blame::THREAD_PARTS) * BLAME_ENTRY_SIZE
    + 4
    + 4
    + blame::STACK_DEPTH * BLAME_FRAME_LEN;
/// Byte size of [`Blame`]: the whole names after the first layout.
pub const BLAME_SIZE: usize = BLAME_SIZE_V1 + 4 + 4 + BLAME_LONG_NAMES * BLAME_LONG_NAME_LEN;

/// The worst late activation of a CPU, explained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameWorst {
    /// Its sequence number.
    pub seq: u64,
    /// Its expected expiry, CLOCK_MONOTONIC ns.
    pub expected_ns: u64,
    /// Its irq and thread latencies, ns.
    pub irq_ns: i64,
    /// (See `irq_ns`.)
    pub thread_ns: i64,
    /// Time before the interrupt of sources past `irq`.
    pub irq_other_ns: u64,
    /// Time after the interrupt of sources past `thread`.
    pub thread_other_ns: u64,
    /// Entries of `irq` in use.
    pub nr_irq: u32,
    /// Entries of `thread` in use.
    pub nr_thread: u32,
    /// What ran from the expected expiry to the interrupt, largest first.
    pub irq: [BlameEntry; blame::IRQ_PARTS],
    /// What ran from the interrupt to the thread, largest first.
    pub thread: [BlameEntry; blame::THREAD_PARTS],
    /// Entries of `stack` in use.
    pub nr_stack: u32,
    /// The code its interrupt interrupted, innermost first, by name
    /// (`module:symbol+off/size`, NUL-padded; `?` unknown); none if it
    /// interrupted user space.
    pub stack: [[u8; BLAME_FRAME_LEN]; blame::STACK_DEPTH],
}

/// What a `RTLAT_IOC_BLAME` request asks: a CPU, and which of its worst
/// activations to explain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlameRequest {
    /// The CPU.
    pub cpu: u32,
    /// Which of the worst: 0 the worst, up to [`blame::WORST`] - 1.
    pub rank: u32,
    /// Whether to be told how many are kept (`nr_worst`): a tool older
    /// than the word sends 0 and wants it 0, as it was (`reserved2`).
    pub tell_nr_worst: bool,
    /// Whether the measuring task's time may come as
    /// [`blame::Kind::Measure`] (`BLAME_WANT_MEASURE` in the request's
    /// `want`, the answer's `has_worst`): a tool older than the kind sends
    /// 0 and is told it as the task it is, as before.
    pub measure_apart: bool,
}

impl BlameRequest {
    /// Rank `rank` of `cpu`, the number kept told, the measurement apart.
    pub const fn new(cpu: u32, rank: u32) -> Self {
        Self {
            cpu,
            rank,
            tell_nr_worst: true,
            measure_apart: true,
        }
    }
}

/// `want` (the answer's `has_worst`) of a request: the measuring task's
/// time as [`blame::Kind::Measure`]. Not bit 0: an answer has 1 there
/// (`has_worst`), and a program that sends its last answer back as its
/// next request, changing the rank, must not ask for what it does not
/// know. Bit 0 is ignored; the others are refused.
pub const BLAME_WANT_MEASURE: u32 = 1 << 1;
/// Where a request's `want` is (the answer's `has_worst`).
pub(super) const BLAME_WANT_AT: usize = 40;

/// Where a request's rank is (the answer's `reserved` word before it).
pub(super) const BLAME_RANK_AT: usize = 52;
/// Where `nr_worst` is (`reserved2` before it): after `nr_stack`.
pub(super) const BLAME_NR_WORST_AT: usize =
    BLAME_SIZE_V1 - blame::STACK_DEPTH * BLAME_FRAME_LEN - 4;
/// Where the whole names are (after their count and a reserved word).
const BLAME_LONG_NAMES_AT: usize = BLAME_SIZE_V1 + 8;

/// The hrtimer callbacks an answer's encoder has named whole so far, in
/// the order of their [`Blame::long_names`].
pub(super) struct LongNames {
    /// Their addresses (a source's `aux`).
    pub(super) keys: [u64; BLAME_LONG_NAMES],
    /// Entries of `keys` in use.
    pub(super) n: usize,
}

impl LongNames {
    /// The index of callback `aux`'s whole name, and whether it is new:
    /// its own if named before, else the next one, if one is left.
    pub(super) fn slot(&mut self, aux: u64) -> Option<(usize, bool)> {
        if let Some(k) = self.keys[..self.n].iter().position(|&a| a == aux) {
            return Some((k, false));
        }
        let k = self.n;
        *self.keys.get_mut(k)? = aux;
        self.n += 1;
        Some((k, true))
    }
}

/// `struct rtlat_blame` (`RTLAT_IOC_BLAME`): one CPU's late activations
/// explained, over the session so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blame {
    /// In: the CPU.
    pub cpu: u32,
    /// In: which of the worst activations `worst` is (0: the worst).
    pub rank: u32,
    /// The worst activations the CPU keeps explained: ranks up to this
    /// one less.
    pub nr_worst: u32,
    /// Late activations explained.
    pub explained: u64,
    /// Their thread latencies, summed (ns).
    pub late_ns: u64,
    /// Time of sources past `culprits` (ns).
    pub other_ns: u64,
    /// Entries of `culprits` in use.
    pub nr_culprits: u32,
    /// The sources, most time first: `ns` their time in the late
    /// activations, `count` how many they were part of, `worst_ns` their
    /// largest part in one.
    pub culprits: [BlameEntry; blame::CULPRITS],
    /// The worst activation of rank `rank`, if that many were explained.
    pub worst: Option<BlameWorst>,
    /// Entries of `long_names` in use (0 in an answer of the first
    /// layout).
    pub nr_long_names: u32,
    /// The whole names of the hrtimer callbacks its entries name (by their
    /// `aux`), `module:symbol` as kallsyms has them (a Rust symbol
    /// mangled), NUL-padded; an entry's `name` is the same, cut.
    pub long_names: [[u8; BLAME_LONG_NAME_LEN]; BLAME_LONG_NAMES],
}

impl Blame {
    /// Encodes the answer to `req` from its CPU's tally's excerpt for it
    /// ([`blame::Tally::excerpt`] of its rank) into `b`, entry by entry
    /// (the kernel's stack holds no whole answer); `name` may rename a
    /// source (the kernel names hrtimer callbacks by symbol), into a buffer
    /// holding its own name: an hrtimer's whole into the answer's
    /// `long_names` if `b` has them (the current layout; once per
    /// callback, while one is left), and cut into its entry's. `b` is an
    /// answer of either layout ([`BLAME_SIZE`], [`BLAME_SIZE_V1`]); one of
    /// another size is left alone. For a request
    /// that does not ask for [`blame::Kind::Measure`], `t` is folded back
    /// into the tasks first ([`blame::Excerpt::fold_measure`]), so that
    /// such a request is answered as before the kind.
    pub fn encode_excerpt(
        req: BlameRequest,
        t: &mut blame::Excerpt,
        mut name: impl FnMut(&blame::Source, &mut [u8]),
        mut frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
        b: &mut [u8],
    ) {
        let mut long = match b.len() {
            BLAME_SIZE => Some(LongNames {
                keys: [0; BLAME_LONG_NAMES],
                n: 0,
            }),
            BLAME_SIZE_V1 => None,
            _ => return,
        };
        if !req.measure_apart {
            t.fold_measure();
        }
        let t = &*t;
        b.fill(0);
        let size = b.len();
        let mut w = Wr { b, at: 0 };
        w.u32(size as u32);
        w.u32(VERSION);
        w.u32(req.cpu);
        w.u32(t.n as u32);
        w.u64(t.explained);
        w.u64(t.late_ns);
        w.u64(t.other_ns);
        let a = t.worst();
        w.u32(u32::from(a.is_some()));
        w.u32(a.map_or(0, |a| a.irq_ex.n as u32));
        w.u32(a.map_or(0, |a| a.thread_ex.n as u32));
        w.u32(req.rank);
        w.u64(a.map_or(0, |a| a.seq));
        w.u64(a.map_or(0, |a| a.expected_ns as u64));
        w.i64(a.map_or(0, |a| a.irq_ns));
        w.i64(a.map_or(0, |a| a.thread_ns));
        w.u64(a.map_or(0, |a| a.irq_ex.other_ns));
        w.u64(a.map_or(0, |a| a.thread_ex.other_ns));
        let base = w.at;
        for (k, &i) in t.ranked_order()[..t.n].iter().enumerate() {
            let c = &t.culprits[usize::from(i)];
            let e = BlameEntry::new(&c.source, c.ns, c.count, c.worst_ns);
            Self::put_entry(
                w.b,
                base + k * BLAME_ENTRY_SIZE,
                e,
                &c.source,
                &mut long,
                &mut name,
            );
        }
        let tail =
            base + (blame::CULPRITS + blame::IRQ_PARTS + blame::THREAD_PARTS) * BLAME_ENTRY_SIZE;
        w.at = BLAME_NR_WORST_AT;
        w.u32(if req.tell_nr_worst {
            t.nworst as u32
        } else {
            0
        });
        if let Some(a) = a {
            let n = a.stack_n.min(blame::STACK_DEPTH);
            w.at = tail;
            w.u32(n as u32);
            for (k, &pc) in a.stack[..n].iter().enumerate() {
                let at = tail + 8 + k * BLAME_FRAME_LEN;
                let f: &mut [u8; BLAME_FRAME_LEN] = (&mut w.b[at..at + BLAME_FRAME_LEN])
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                frame(pc, f);
            }
            let irq = base + blame::CULPRITS * BLAME_ENTRY_SIZE;
            let thread = irq + blame::IRQ_PARTS * BLAME_ENTRY_SIZE;
            for (at, parts) in [
                (irq, &a.irq[..a.irq_ex.n]),
                (thread, &a.thread[..a.thread_ex.n]),
            ] {
                for (k, s) in parts.iter().enumerate() {
                    let e = BlameEntry::new(&s.source, s.ns, u64::from(s.count), 0);
                    let at = at + k * BLAME_ENTRY_SIZE;
                    Self::put_entry(w.b, at, e, &s.source, &mut long, &mut name);
                }
            }
        }
        if let Some(l) = long {
            w.at = BLAME_SIZE_V1;
            w.u32(l.n as u32);
        }
    }

    /// Writes entry `e` of source `s` at `at` of answer `b`, named by
    /// `name`: an hrtimer callback whole in `b`'s `long_names` if `long`
    /// has one for it, and cut in `e`.
    fn put_entry(
        b: &mut [u8],
        at: usize,
        mut e: BlameEntry,
        s: &blame::Source,
        long: &mut Option<LongNames>,
        name: &mut impl FnMut(&blame::Source, &mut [u8]),
    ) {
        let slot = match long {
            Some(l) if s.kind == blame::Kind::Timer && s.aux != 0 => l.slot(s.aux),
            _ => None,
        };
        match slot {
            Some((k, new)) => {
                let from = BLAME_LONG_NAMES_AT + k * BLAME_LONG_NAME_LEN;
                let whole = &mut b[from..from + BLAME_LONG_NAME_LEN];
                if new {
                    whole[..BLAME_NAME_LEN].copy_from_slice(&e.name);
                    name(s, whole);
                }
                // (Cut as the first layout's: its bytes, NUL last.)
                let n = BLAME_NAME_LEN - 1;
                e.name[..n].copy_from_slice(&whole[..n]);
                e.name[n] = 0;
                e.aux = k as u64 + 1;
            }
            None => name(s, &mut e.name),
        }
        e.encode(&mut Wr { b, at });
    }

    /// Encodes the answer to `req` from its CPU's tally into `b`, as
    /// [`Self::encode_excerpt`] does from its excerpt.
    pub fn encode_tally(
        req: BlameRequest,
        t: &blame::Tally,
        name: impl FnMut(&blame::Source, &mut [u8]),
        frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
        b: &mut [u8],
    ) {
        let mut e = blame::Excerpt::EMPTY;
        t.excerpt(req.rank as usize, &mut e);
        Self::encode_excerpt(req, &mut e, name, frame, b);
    }

    /// The answer to `req` from its CPU's tally, as [`Self::encode_tally`]
    /// writes it.
    pub fn from_tally(
        req: BlameRequest,
        t: &blame::Tally,
        name: impl FnMut(&blame::Source, &mut [u8]),
        frame: impl FnMut(u64, &mut [u8; BLAME_FRAME_LEN]),
    ) -> Self {
        let mut b = [0u8; BLAME_SIZE];
        Self::encode_tally(req, t, name, frame, &mut b);
        Self::decode(&b).unwrap_or_else(|e| panic!("an encoded tally decodes: {e:?}"))
    }

    /// Decodes a request of either layout (by `b`'s length): the CPU, the
    /// rank, which must be below [`blame::WORST`], and whether `nr_worst`
    /// is nonzero (the other words are the answer's, ignored).
    pub fn decode_request(b: &[u8]) -> Result<BlameRequest, UapiError> {
        let mut r = header(b, Self::layout(b))?;
        let cpu = r.u32();
        r.at = BLAME_WANT_AT;
        let want = r.u32();
        // (Bit 0 is an answer's has_worst, sent back.)
        if want & !(BLAME_WANT_MEASURE | 1) != 0 {
            return Err(UapiError::Invalid);
        }
        let measure_apart = want & BLAME_WANT_MEASURE != 0;
        r.at = BLAME_RANK_AT;
        let rank = r.u32();
        r.at = BLAME_NR_WORST_AT;
        let tell_nr_worst = r.u32() != 0;
        if rank as usize >= blame::WORST {
            return Err(UapiError::Invalid);
        }
        Ok(BlameRequest {
            cpu,
            rank,
            tell_nr_worst,
            measure_apart,
        })
    }

    /// The layout's size a buffer of `b`'s length has: the first's, else
    /// the current one's.
    fn layout(b: &[u8]) -> usize {
        match b.len() {
            BLAME_SIZE_V1 => BLAME_SIZE_V1,
            _ => BLAME_SIZE,
        }
    }

    /// Encodes `req` into `b`, in the layout of its length (the current
    /// one, or the first, [`BLAME_SIZE_V1`]; nothing into one of another
    /// length).
    pub fn encode_request(req: BlameRequest, b: &mut [u8]) {
        if b.len() != BLAME_SIZE && b.len() != BLAME_SIZE_V1 {
            return;
        }
        b.fill(0);
        let size = b.len();
        let mut w = Wr { b, at: 0 };
        w.u32(size as u32);
        w.u32(VERSION);
        w.u32(req.cpu);
        w.at = BLAME_WANT_AT;
        w.u32(if req.measure_apart {
            BLAME_WANT_MEASURE
        } else {
            0
        });
        w.at = BLAME_RANK_AT;
        w.u32(req.rank);
        w.at = BLAME_NR_WORST_AT;
        w.u32(u32::from(req.tell_nr_worst));
    }

    /// Decodes an answer of either layout (by `b`'s length). One of a
    /// module older than `nr_worst` (which keeps one worst activation and
    /// answers 0 there) reads as `nr_worst` 1 if it has a worst.
    pub fn decode(b: &[u8]) -> Result<Self, UapiError> {
        let size = Self::layout(b);
        let mut r = header(b, size)?;
        let cpu = r.u32();
        let nr_culprits = r.u32();
        let (explained, late_ns, other_ns) = (r.u64(), r.u64(), r.u64());
        let has_worst = r.u32();
        let (nr_irq, nr_thread, rank) = (r.u32(), r.u32(), r.u32());
        let mut w = BlameWorst {
            nr_irq,
            nr_thread,
            seq: r.u64(),
            expected_ns: r.u64(),
            irq_ns: r.u64() as i64,
            thread_ns: r.u64() as i64,
            irq_other_ns: r.u64(),
            thread_other_ns: r.u64(),
            irq: [BlameEntry::EMPTY; blame::IRQ_PARTS],
            thread: [BlameEntry::EMPTY; blame::THREAD_PARTS],
            nr_stack: 0,
            stack: [[0; BLAME_FRAME_LEN]; blame::STACK_DEPTH],
        };
        if has_worst > 1
            || nr_culprits as usize > blame::CULPRITS
            || nr_irq as usize > blame::IRQ_PARTS
            || nr_thread as usize > blame::THREAD_PARTS
        {
            return Err(UapiError::Invalid);
        }
        let mut culprits = [BlameEntry::EMPTY; blame::CULPRITS];
        for e in culprits
            .iter_mut()
            .chain(w.irq.iter_mut())
            .chain(w.thread.iter_mut())
        {
            *e = BlameEntry::decode(&mut r)?;
        }
        w.nr_stack = r.u32();
        let nr_worst = match r.u32() {
            0 if rank == 0 => has_worst,
            n => n,
        };
        if w.nr_stack as usize > blame::STACK_DEPTH
            || nr_worst as usize > blame::WORST
            || u64::from(nr_worst) > explained
            || (has_worst == 1) != (rank < nr_worst)
        {
            return Err(UapiError::Invalid);
        }
        for f in w.stack.iter_mut() {
            f.copy_from_slice(&r.b[r.at..r.at + BLAME_FRAME_LEN]);
            r.at += BLAME_FRAME_LEN;
        }
        let mut nr_long_names = 0;
        let mut long_names = [[0; BLAME_LONG_NAME_LEN]; BLAME_LONG_NAMES];
        if size == BLAME_SIZE {
            nr_long_names = r.u32();
            r.at = BLAME_LONG_NAMES_AT;
            for n in long_names.iter_mut() {
                n.copy_from_slice(&r.b[r.at..r.at + BLAME_LONG_NAME_LEN]);
                r.at += BLAME_LONG_NAME_LEN;
            }
        }
        // An entry's `aux`: 0, or an hrtimer's whole name among those
        // given.
        let bad_aux = |e: &BlameEntry| {
            e.aux != 0 && (e.kind != blame::Kind::Timer as u32 || e.aux > u64::from(nr_long_names))
        };
        if nr_long_names as usize > BLAME_LONG_NAMES
            || culprits
                .iter()
                .chain(w.irq.iter())
                .chain(w.thread.iter())
                .any(bad_aux)
        {
            return Err(UapiError::Invalid);
        }
        Ok(Self {
            cpu,
            rank,
            nr_worst,
            explained,
            late_ns,
            other_ns,
            nr_culprits,
            culprits,
            worst: (has_worst == 1).then_some(w),
            nr_long_names,
            long_names,
        })
    }

    /// The name of entry `e` of this answer: its callback's whole one for
    /// an hrtimer that has it, else its own, up to the first NUL.
    pub fn name_of<'a>(&'a self, e: &'a BlameEntry) -> &'a [u8] {
        let whole = match usize::try_from(e.aux) {
            Ok(k @ 1..) if k <= self.nr_long_names as usize => self.long_names.get(k - 1),
            _ => None,
        };
        match whole {
            Some(n) => &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())],
            None => e.name_bytes(),
        }
    }
}
