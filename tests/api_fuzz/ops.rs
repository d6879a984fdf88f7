//! The fuzzer's operations, their replay-file lines, and the seeded generator that writes a
//! type-correct sequence of them for one host thread.
//!
//! Every argument is a slot index into the thread's own small world (streams, events,
//! buffers, modules, graph execs), never a raw handle, so a replay file means the same thing
//! in every run. `NULL` (255) as a stream slot is the null stream.
//!
//! The generator keeps a shadow of the world and inserts the synchronisation a correct
//! program needs before two streams (or the host) touch the same buffer, so that every
//! buffer's contents are determined by program order and the host model can predict them.
//! What it does not avoid is everything else a hostile but legal program does: destroying
//! streams, events, modules and graphs while work that uses them is queued, freeing memory
//! with work in flight (hipFree waits for the device), faulting kernels followed by more
//! work, host callbacks, and queries of unfinished work.

use std::collections::HashMap;

pub const STREAMS: u32 = 4;
pub const EVENTS: u32 = 4;
pub const BUFFERS: u32 = 6;
pub const MODULES: u32 = 2;
pub const GRAPHS: u32 = 2;
pub const NULL: u32 = 255;

/// Buffer kinds (`Alloc`'s `kind`).
pub const DEVICE: u32 = 0;
pub const PINNED: u32 = 1;
pub const PAGEABLE: u32 = 2;
pub const MANAGED: u32 = 3;
pub const POOL: u32 = 4;
const KINDS: u32 = 5;
const SIZES: [u32; 5] = [1, 17, 256, 1024, 4099];

macro_rules! ops {
    ($($name:ident { $($field:ident),* }),* $(,)?) => {
        /// One step of a thread's sequence. Fields are slots, flags (0/1) and values.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Op {
            $($name { $($field: u32),* },)*
        }

        impl Op {
            /// The replay-file form: `Name field=value ...`.
            pub fn to_line(&self) -> String {
                match self {
                    $(Op::$name { $($field),* } => {
                        #[allow(unused_mut)]
                        let mut line = String::from(stringify!($name));
                        $(line.push_str(&format!(" {}={}", stringify!($field), $field));)*
                        line
                    })*
                }
            }

            pub fn parse(line: &str) -> Result<Op, String> {
                let mut words = line.split_whitespace();
                let name = words.next().ok_or("empty line")?;
                let mut args = HashMap::new();
                for word in words {
                    let (k, v) = word.split_once('=').ok_or_else(|| format!("bad `{word}`"))?;
                    let v: u32 = v.parse().map_err(|_| format!("bad number in `{word}`"))?;
                    args.insert(k, v);
                }
                #[allow(unused_variables, unused_mut)]
                let mut get = |k: &str| {
                    args.remove(k).ok_or_else(|| format!("`{line}` lacks {k}"))
                };
                let op = match name {
                    $(stringify!($name) => Op::$name { $($field: get(stringify!($field))?),* },)*
                    _ => return Err(format!("unknown op `{name}`")),
                };
                Ok(op)
            }
        }
    };
}

ops! {
    StreamCreate { s, nonblocking },
    StreamDestroy { s },
    StreamSync { s },
    StreamQuery { s },
    EventCreate { e, timing },
    EventDestroy { e },
    EventRecord { e, s },
    EventSync { e },
    EventQuery { e },
    EventElapsed { a, b },
    StreamWaitEvent { s, e },
    Alloc { b, kind, n, s },
    Free { b, s },
    Memset { b, s, value },
    Copy { dst, src, s, sync },
    Fill { b, s, m, value },
    Mix { dst, src, s, m, k },
    Fault { s, m, trap },
    HostFunc { s, add_callback },
    Check { b },
    ModuleLoad { m },
    ModuleUnload { m },
    BeginCapture { s },
    EndCapture { s, g },
    GraphLaunch { g, s },
    GraphExecDestroy { g },
    DeviceSync {},
    GetLastError {},
    Recover {},
}

/// splitmix64: small, seedable, and good enough to pick operations.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n.max(1))) as u32
    }

    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
}

/// A stream as the shadow knows it: its slot and which creation of that slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct StreamId {
    slot: u32,
    generation: u32,
}

#[derive(Clone)]
struct BufShadow {
    kind: u32,
    /// The stream whose queued work may still touch the buffer (None: idle).
    owner: Option<StreamId>,
}

#[derive(Clone)]
struct GraphShadow {
    buffers: Vec<u32>,
    modules: Vec<u32>,
}

/// The generator's view of one thread's world.
struct Shadow {
    streams: [Option<u32>; STREAMS as usize],
    generations: [u32; STREAMS as usize],
    null_generation: u32,
    events: [Option<bool>; EVENTS as usize],
    /// Events recorded (and not destroyed since), with timing.
    recorded: [bool; EVENTS as usize],
    buffers: [Option<BufShadow>; BUFFERS as usize],
    modules: [bool; MODULES as usize],
    graphs: [Option<GraphShadow>; GRAPHS as usize],
}

/// What a run's sequences may contain beyond the basics.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    /// Faulting kernels.
    pub faults: bool,
    /// Stream-ordered (pool) allocations.
    pub pool: bool,
    /// Module unloads.
    pub unload: bool,
}

impl Features {
    pub const ALL: Features = Features {
        faults: true,
        pool: true,
        unload: true,
    };

    /// `ALL` less the features named in `without` (comma-separated).
    pub fn without(without: &str) -> Features {
        let mut f = Features::ALL;
        for name in without.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "faults" => f.faults = false,
                "pool" => f.pool = false,
                "unload" => f.unload = false,
                _ => panic!("unknown api_fuzz feature `{name}` (faults, pool, unload)"),
            }
        }
        f
    }
}

/// Writes `calls` operations for one thread.
pub fn generate(seed: u64, thread: u32, calls: usize, features: Features) -> Vec<Op> {
    let mut g = Generator {
        rng: Rng::new(seed ^ (u64::from(thread) + 1).wrapping_mul(0xa076_1d64_78bd_642f)),
        w: Shadow {
            streams: [None; STREAMS as usize],
            generations: [0; STREAMS as usize],
            null_generation: 0,
            events: [None; EVENTS as usize],
            recorded: [false; EVENTS as usize],
            buffers: Default::default(),
            modules: [false; MODULES as usize],
            graphs: Default::default(),
        },
        ops: Vec::with_capacity(calls + 16),
        recover_in: None,
        features,
    };
    while g.ops.len() < calls {
        g.step();
    }
    // Leave the world quiet: a replay ends with everything checked.
    g.push(Op::Recover {});
    for b in 0..BUFFERS {
        if g.w.buffers[b as usize].is_some() {
            g.host_access(b);
            g.push(Op::Check { b });
        }
    }
    g.push(Op::DeviceSync {});
    g.ops
}

struct Generator {
    rng: Rng,
    w: Shadow,
    ops: Vec<Op>,
    /// Operations left before the `Recover` that ends a fault episode.
    recover_in: Option<u32>,
    features: Features,
}

impl Generator {
    fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    fn stream_id(&self, s: u32) -> StreamId {
        let generation = if s == NULL {
            self.w.null_generation
        } else {
            self.w.generations[s as usize]
        };
        StreamId {
            slot: s,
            generation,
        }
    }

    fn stream_alive(&self, id: StreamId) -> bool {
        id.slot == NULL
            || (self.w.streams[id.slot as usize].is_some()
                && self.w.generations[id.slot as usize] == id.generation)
    }

    fn live<T>(slots: &[Option<T>]) -> Vec<u32> {
        (0..slots.len() as u32)
            .filter(|&i| slots[i as usize].is_some())
            .collect()
    }

    fn pick(&mut self, from: &[u32]) -> Option<u32> {
        (!from.is_empty()).then(|| from[self.rng.below(from.len() as u32) as usize])
    }

    /// A live stream, or the null stream now and then.
    fn any_stream(&mut self) -> u32 {
        let live = Self::live(&self.w.streams);
        if live.is_empty() || self.rng.chance(15) {
            NULL
        } else {
            self.pick(&live).unwrap()
        }
    }

    fn create_stream(&mut self, s: u32) {
        if self.w.streams[s as usize].is_some() {
            self.destroy_stream(s);
        }
        let nonblocking = self.rng.below(2);
        self.push(Op::StreamCreate { s, nonblocking });
        self.w.streams[s as usize] = Some(nonblocking);
        self.w.generations[s as usize] += 1;
    }

    fn destroy_stream(&mut self, s: u32) {
        self.push(Op::StreamDestroy { s });
        self.w.streams[s as usize] = None;
    }

    fn module(&mut self) -> u32 {
        let live: Vec<u32> = (0..MODULES)
            .filter(|&m| self.w.modules[m as usize])
            .collect();
        match self.pick(&live) {
            Some(m) => m,
            None => {
                let m = self.rng.below(MODULES);
                self.push(Op::ModuleLoad { m });
                self.w.modules[m as usize] = true;
                m
            }
        }
    }

    fn event(&mut self) -> u32 {
        let live = Self::live(&self.w.events);
        match self.pick(&live) {
            Some(e) => e,
            None => {
                let e = self.rng.below(EVENTS);
                let timing = self.rng.below(2);
                self.push(Op::EventCreate { e, timing });
                self.w.events[e as usize] = Some(timing == 1);
                self.w.recorded[e as usize] = false;
                e
            }
        }
    }

    /// A live buffer the device can address (made if there is none).
    fn device_buffer(&mut self, avoid: Option<u32>) -> u32 {
        let live: Vec<u32> = (0..BUFFERS)
            .filter(|&b| Some(b) != avoid)
            .filter(|&b| matches!(&self.w.buffers[b as usize], Some(x) if x.kind != PAGEABLE))
            .collect();
        match self.pick(&live) {
            Some(b) => b,
            None => {
                let b = (0..BUFFERS).find(|&b| Some(b) != avoid).unwrap();
                let b = if avoid.is_none() {
                    self.rng.below(BUFFERS)
                } else {
                    b
                };
                let kinds = if self.features.pool { 4 } else { 3 };
                let kind = [DEVICE, PINNED, MANAGED, POOL][self.rng.below(kinds) as usize];
                self.alloc(b, kind);
                b
            }
        }
    }

    fn any_buffer(&mut self, avoid: Option<u32>) -> u32 {
        let live: Vec<u32> = Self::live(&self.w.buffers)
            .into_iter()
            .filter(|&b| Some(b) != avoid)
            .collect();
        match self.pick(&live) {
            Some(b) => b,
            None => self.device_buffer(avoid),
        }
    }

    fn alloc(&mut self, b: u32, kind: u32) {
        if self.w.buffers[b as usize].is_some() {
            self.free(b);
        }
        let n = SIZES[self.rng.below(SIZES.len() as u32) as usize];
        let s = if kind == POOL {
            self.any_stream()
        } else {
            NULL
        };
        self.push(Op::Alloc { b, kind, n, s });
        self.w.buffers[b as usize] = Some(BufShadow {
            kind,
            owner: (kind == POOL).then(|| self.stream_id(s)),
        });
    }

    fn free(&mut self, b: u32) {
        // A graph that uses the buffer goes first (its nodes would point at freed memory).
        for g in 0..GRAPHS {
            if matches!(&self.w.graphs[g as usize], Some(x) if x.buffers.contains(&b)) {
                self.push(Op::GraphExecDestroy { g });
                self.w.graphs[g as usize] = None;
            }
        }
        let buf = self.w.buffers[b as usize].clone().unwrap();
        let s = match buf.kind {
            // Stream-ordered: on the stream that last used it, or after waiting for it.
            POOL => {
                let s = self.any_stream();
                self.touch(b, s);
                s
            }
            // The host frees it at once: nothing may still be copying it.
            PAGEABLE => {
                self.host_access(b);
                NULL
            }
            // hipFree and hipHostFree wait for the device themselves.
            _ => NULL,
        };
        self.push(Op::Free { b, s });
        self.w.buffers[b as usize] = None;
    }

    /// Orders stream `s`'s next use of buffer `b` after whatever queued work uses it.
    fn touch(&mut self, b: u32, s: u32) {
        let Some(owner) = self.w.buffers[b as usize].as_ref().unwrap().owner else {
            return;
        };
        if owner == self.stream_id(s) {
            return;
        }
        if !self.stream_alive(owner) {
            self.device_sync();
        } else if self.rng.chance(50) {
            let e = self.event();
            self.push(Op::EventRecord { e, s: owner.slot });
            self.w.recorded[e as usize] = true;
            self.push(Op::StreamWaitEvent { s, e });
            // Only this buffer is handed over: the owner may use its others again.
            self.w.buffers[b as usize].as_mut().unwrap().owner = Some(self.stream_id(s));
        } else {
            self.stream_sync(owner.slot);
        }
    }

    /// Waits until no queued work touches buffer `b` (before the host reads or frees it).
    fn host_access(&mut self, b: u32) {
        let Some(owner) = self.w.buffers[b as usize].as_ref().unwrap().owner else {
            return;
        };
        if self.stream_alive(owner) && self.rng.chance(70) {
            self.stream_sync(owner.slot);
        } else {
            self.device_sync();
        }
    }

    fn stream_sync(&mut self, s: u32) {
        self.push(Op::StreamSync { s });
        let id = self.stream_id(s);
        for buf in self.w.buffers.iter_mut().flatten() {
            if buf.owner == Some(id) {
                buf.owner = None;
            }
        }
    }

    fn device_sync(&mut self) {
        self.push(Op::DeviceSync {});
        for buf in self.w.buffers.iter_mut().flatten() {
            buf.owner = None;
        }
    }

    fn used_on(&mut self, b: u32, s: u32) {
        let id = self.stream_id(s);
        self.w.buffers[b as usize].as_mut().unwrap().owner = Some(id);
    }

    fn kind(&self, b: u32) -> u32 {
        self.w.buffers[b as usize].as_ref().unwrap().kind
    }

    fn step(&mut self) {
        if let Some(left) = self.recover_in {
            if left == 0 {
                self.push(Op::Recover {});
                self.recover_in = None;
                // Recovery synchronises the device.
                for buf in self.w.buffers.iter_mut().flatten() {
                    buf.owner = None;
                }
            } else {
                self.recover_in = Some(left - 1);
            }
        }
        match self.rng.below(100) {
            0..=3 => {
                let s = self.rng.below(STREAMS);
                self.create_stream(s);
            }
            4..=6 => {
                if let Some(s) = self.pick(&Self::live(&self.w.streams)) {
                    self.destroy_stream(s);
                }
            }
            7..=10 => {
                let s = self.any_stream();
                self.stream_sync(s);
            }
            11..=12 => {
                let s = self.any_stream();
                self.push(Op::StreamQuery { s });
            }
            13..=14 => {
                let e = self.rng.below(EVENTS);
                let timing = self.rng.below(2);
                self.push(Op::EventCreate { e, timing });
                self.w.events[e as usize] = Some(timing == 1);
                self.w.recorded[e as usize] = false;
            }
            15..=16 => {
                if let Some(e) = self.pick(&Self::live(&self.w.events)) {
                    self.push(Op::EventDestroy { e });
                    self.w.events[e as usize] = None;
                    self.w.recorded[e as usize] = false;
                }
            }
            17..=20 => {
                let e = self.event();
                let s = self.any_stream();
                self.push(Op::EventRecord { e, s });
                self.w.recorded[e as usize] = true;
            }
            21..=23 => {
                let e = self.event();
                if self.rng.chance(50) {
                    self.push(Op::EventSync { e });
                } else {
                    self.push(Op::EventQuery { e });
                }
            }
            24 => {
                let timed: Vec<u32> = (0..EVENTS)
                    .filter(|&e| self.w.events[e as usize] == Some(true))
                    .filter(|&e| self.w.recorded[e as usize])
                    .collect();
                if let (Some(a), Some(b)) = (self.pick(&timed), self.pick(&timed)) {
                    self.push(Op::EventElapsed { a, b });
                }
            }
            25..=26 => {
                let e = self.event();
                let s = self.any_stream();
                self.push(Op::StreamWaitEvent { s, e });
            }
            27..=33 => {
                let b = self.rng.below(BUFFERS);
                let kind = self
                    .rng
                    .below(if self.features.pool { KINDS } else { KINDS - 1 });
                self.alloc(b, kind);
            }
            34..=37 => {
                if let Some(b) = self.pick(&Self::live(&self.w.buffers)) {
                    self.free(b);
                }
            }
            38..=43 => {
                let b = self.device_buffer(None);
                let s = self.any_stream();
                self.touch(b, s);
                let value = self.rng.next() as u32;
                self.push(Op::Memset { b, s, value });
                self.used_on(b, s);
            }
            44..=53 => self.copy(),
            54..=63 => {
                let b = self.device_buffer(None);
                let s = self.any_stream();
                let m = self.module();
                self.touch(b, s);
                let value = self.rng.next() as u32;
                self.push(Op::Fill { b, s, m, value });
                self.used_on(b, s);
            }
            64..=71 => {
                let dst = self.device_buffer(None);
                let src = self.device_buffer(Some(dst));
                let s = self.any_stream();
                let m = self.module();
                self.touch(dst, s);
                self.touch(src, s);
                let k = self.rng.next() as u32;
                self.push(Op::Mix { dst, src, s, m, k });
                self.used_on(dst, s);
                self.used_on(src, s);
            }
            72 if self.features.faults && self.recover_in.is_none() => {
                let s = self.any_stream();
                let m = self.module();
                let trap = self.rng.below(2);
                self.push(Op::Fault { s, m, trap });
                self.recover_in = Some(self.rng.below(8));
            }
            73..=76 => {
                let s = self.any_stream();
                let add_callback = self.rng.below(2);
                self.push(Op::HostFunc { s, add_callback });
            }
            77..=82 => {
                let b = self.any_buffer(None);
                self.host_access(b);
                self.push(Op::Check { b });
            }
            83 => {
                let m = self.rng.below(MODULES);
                if !self.w.modules[m as usize] {
                    self.push(Op::ModuleLoad { m });
                    self.w.modules[m as usize] = true;
                }
            }
            84 if self.features.unload => {
                let m = self.rng.below(MODULES);
                if self.w.modules[m as usize] {
                    for g in 0..GRAPHS {
                        if matches!(&self.w.graphs[g as usize], Some(x) if x.modules.contains(&m)) {
                            self.push(Op::GraphExecDestroy { g });
                            self.w.graphs[g as usize] = None;
                        }
                    }
                    // Launches of it may still be queued: the unload must wait for them.
                    self.push(Op::ModuleUnload { m });
                    self.w.modules[m as usize] = false;
                }
            }
            85..=87 => self.capture(),
            88..=91 => {
                if let Some(g) = self.pick(&Self::live(&self.w.graphs)) {
                    let s = self.any_stream();
                    let graph = self.w.graphs[g as usize].clone().unwrap();
                    for &b in &graph.buffers {
                        self.touch(b, s);
                    }
                    self.push(Op::GraphLaunch { g, s });
                    for &b in &graph.buffers {
                        self.used_on(b, s);
                    }
                }
            }
            92 => {
                if let Some(g) = self.pick(&Self::live(&self.w.graphs)) {
                    self.push(Op::GraphExecDestroy { g });
                    self.w.graphs[g as usize] = None;
                }
            }
            93..=94 => self.device_sync(),
            95..=96 => self.push(Op::GetLastError {}),
            _ => {}
        }
    }

    fn copy(&mut self) {
        let dst = self.any_buffer(None);
        let src = self.any_buffer(Some(dst));
        let pageable = self.kind(dst) == PAGEABLE || self.kind(src) == PAGEABLE;
        let sync = u32::from(self.rng.chance(30));
        if sync == 1 {
            self.host_access(dst);
            self.host_access(src);
            self.push(Op::Copy {
                dst,
                src,
                s: NULL,
                sync,
            });
            return;
        }
        let s = self.any_stream();
        self.touch(dst, s);
        self.touch(src, s);
        if pageable {
            // The host side may be read or written until the stream gets there.
            self.host_access(dst);
            self.host_access(src);
        }
        self.push(Op::Copy { dst, src, s, sync });
        self.used_on(dst, s);
        self.used_on(src, s);
    }

    /// A stream capture of one to three operations, instantiated into a graph exec.
    fn capture(&mut self) {
        let g = self.rng.below(GRAPHS);
        if self.w.graphs[g as usize].is_some() {
            self.push(Op::GraphExecDestroy { g });
            self.w.graphs[g as usize] = None;
        }
        // A non-blocking stream: the null stream's implicit synchronisation with a blocking
        // stream that captures (from any thread) is an error by design (906, and the
        // capture is invalidated).
        let nonblocking: Vec<u32> = (0..STREAMS)
            .filter(|&s| self.w.streams[s as usize] == Some(1))
            .collect();
        let s = match self.pick(&nonblocking) {
            Some(s) => s,
            None => {
                let s = self.rng.below(STREAMS);
                if self.w.streams[s as usize].is_some() {
                    self.destroy_stream(s);
                }
                self.push(Op::StreamCreate { s, nonblocking: 1 });
                self.w.streams[s as usize] = Some(1);
                self.w.generations[s as usize] += 1;
                s
            }
        };
        let m = self.module();
        // Make every buffer first: nothing but capturable work may happen inside.
        let a = self.device_buffer(None);
        let b = self.device_buffer(Some(a));
        self.push(Op::BeginCapture { s });
        let mut buffers = vec![a, b];
        for _ in 0..1 + self.rng.below(3) {
            let (x, y) = if self.rng.chance(50) { (a, b) } else { (b, a) };
            let op = match self.rng.below(4) {
                0 => Op::Memset {
                    b: x,
                    s,
                    value: self.rng.next() as u32,
                },
                1 => Op::Fill {
                    b: x,
                    s,
                    m,
                    value: self.rng.next() as u32,
                },
                2 => Op::Mix {
                    dst: x,
                    src: y,
                    s,
                    m,
                    k: self.rng.next() as u32,
                },
                _ => Op::Copy {
                    dst: x,
                    src: y,
                    s,
                    sync: 0,
                },
            };
            self.push(op);
        }
        buffers.dedup();
        self.push(Op::EndCapture { s, g });
        self.w.graphs[g as usize] = Some(GraphShadow {
            buffers,
            modules: vec![m],
        });
    }
}

/// A replay file: a header and each thread's operations.
pub struct Replay {
    pub seed: u64,
    pub ops: Vec<Vec<Op>>,
}

impl Replay {
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "# hipshim api_fuzz replay: tests/api_fuzz.rs replays it (HIPSHIM_API_FUZZ_REPLAY=FILE)\n\
             seed {}\nthreads {}\n",
            self.seed,
            self.ops.len()
        );
        for (t, ops) in self.ops.iter().enumerate() {
            for op in ops {
                s.push_str(&format!("T{t} {}\n", op.to_line()));
            }
        }
        s
    }

    pub fn parse(text: &str) -> Result<Replay, String> {
        let mut seed = 0;
        let mut ops: Vec<Vec<Op>> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            let at = |e: String| format!("line {}: {e}", i + 1);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(v) = line.strip_prefix("seed ") {
                seed = v.trim().parse().map_err(|_| at("bad seed".into()))?;
            } else if let Some(v) = line.strip_prefix("threads ") {
                let n: usize = v.trim().parse().map_err(|_| at("bad threads".into()))?;
                ops = vec![Vec::new(); n];
            } else if let Some(rest) = line.strip_prefix('T') {
                let (t, op) = rest.split_once(' ').ok_or_else(|| at("bad line".into()))?;
                let t: usize = t.parse().map_err(|_| at("bad thread".into()))?;
                let list = ops
                    .get_mut(t)
                    .ok_or_else(|| at("thread out of range".into()))?;
                list.push(Op::parse(op).map_err(at)?);
            } else {
                return Err(at(format!("unknown line `{line}`")));
            }
        }
        Ok(Replay { seed, ops })
    }
}
