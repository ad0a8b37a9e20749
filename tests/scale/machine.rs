//! How much of this machine a run used (`make bench-scale`): the CPU time every process spent
//! between two readings of `/proc/stat`, so that a burst's completion can be set against the
//! time the machine's cores alone need for that work, beside the time the quotas force. A run
//! whose CPU floor is above its quota-bound ideal is bound by the machine, not by the design.
//! LocalStack's own process is read apart: it is one Python process, and Python's interpreter
//! lock lets it use about one core however many the machine has, so its CPU time a document
//! bounds the pace alone.

/// One reading of the machine's CPU counters (`/proc/stat`'s first line, in clock ticks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuReading {
    /// Ticks spent on work: user, nice, system, irq, softirq and steal.
    pub busy: u64,
    /// Every tick, idle and I/O wait included.
    pub total: u64,
}

/// The aggregate `cpu` line of a `/proc/stat` text, or `None` when there is none.
pub fn parse_proc_stat(text: &str) -> Option<CpuReading> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal (guest time is counted in user already)
    let field = |i: usize| ticks.get(i).copied().unwrap_or(0);
    let total = (0..8).map(field).sum();
    let busy = total - field(3) - field(4);
    Some(CpuReading { busy, total })
}

/// The machine's counters now (`None` where there is no `/proc/stat`).
pub fn read() -> Option<CpuReading> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The CPU ticks process `pid` has spent, user and system (`/proc/<pid>/stat`'s 14th and 15th
/// fields), or `None` when it is not there.
pub fn parse_process_stat(text: &str) -> Option<u64> {
    // The command name (2nd field) is in parentheses and may hold spaces: count after it.
    let after = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some(ticks(11)? + ticks(12)?)
}

/// Process `pid`'s CPU ticks now.
pub fn read_process(pid: u32) -> Option<u64> {
    parse_process_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The CPU seconds a process spent between two readings of its ticks, the machine's readings
/// `before` and `after` (taken with them, `wall_seconds` apart on `cores` cores) telling how
/// long a tick is.
pub fn process_seconds(
    ticks: (u64, u64),
    (before, after): (CpuReading, CpuReading),
    wall_seconds: f64,
    cores: usize,
) -> f64 {
    let total = after.total.saturating_sub(before.total).max(1) as f64;
    ticks.1.saturating_sub(ticks.0) as f64 / total * wall_seconds * cores as f64
}

/// What the machine did between two readings taken `wall_seconds` apart on `cores` cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    /// CPU seconds spent on work, by every process.
    pub busy_seconds: f64,
    /// The share of the cores' time that was busy (0 to 1).
    pub utilisation: f64,
}

/// The CPU use between `before` and `after`.
pub fn used(before: CpuReading, after: CpuReading, wall_seconds: f64, cores: usize) -> CpuUse {
    let total = after.total.saturating_sub(before.total).max(1) as f64;
    let utilisation = after.busy.saturating_sub(before.busy) as f64 / total;
    CpuUse {
        busy_seconds: utilisation * wall_seconds * cores as f64,
        utilisation,
    }
}

/// The time `cores` cores need for `busy_seconds` of work, kept busy all along: no run doing
/// that work on this machine completes sooner.
pub fn floor_seconds(busy_seconds: f64, cores: usize) -> f64 {
    busy_seconds / cores.max(1) as f64
}

/// What a stretch of work used of the machine, and of one process on it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// The machine's use.
    pub machine: CpuUse,
    /// The process's CPU seconds, when it could be read at both ends.
    pub process_seconds: Option<f64>,
    /// The machine's cores.
    pub cores: usize,
}

/// The machine's counters, and those of one process (`pid`), at the start of a stretch.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    machine: Option<CpuReading>,
    process: Option<(u32, u64)>,
    at: std::time::Instant,
}

impl Mark {
    /// Reads the counters now.
    pub fn now(pid: Option<u32>) -> Mark {
        Mark {
            machine: read(),
            process: pid.and_then(|pid| Some((pid, read_process(pid)?))),
            at: std::time::Instant::now(),
        }
    }

    /// What was used since the mark (`None` where there is no `/proc/stat`).
    pub fn usage(&self) -> Option<Usage> {
        let wall = self.at.elapsed().as_secs_f64();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let readings = (self.machine?, read()?);
        let process = self
            .process
            .and_then(|(pid, before)| Some((before, read_process(pid)?)));
        Some(Usage {
            machine: used(readings.0, readings.1, wall, cores),
            process_seconds: process.map(|t| process_seconds(t, readings, wall, cores)),
            cores,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 20 30 400 50 6 4 0 0 0\ncpu0 50 10 15 200 25 3 2 0 0 0\n";

    #[test]
    fn the_busy_ticks_are_all_but_idle_and_io_wait() {
        let reading = parse_proc_stat(STAT).unwrap();
        assert_eq!(reading.total, 610);
        assert_eq!(reading.busy, 160);
        assert_eq!(parse_proc_stat("intr 1 2\n"), None);
    }

    #[test]
    fn use_is_the_busy_share_of_the_cores_time() {
        let before = CpuReading {
            busy: 100,
            total: 1000,
        };
        let after = CpuReading {
            busy: 850,
            total: 2000,
        };
        // 1,000 ticks passed on 2 cores over 5 s, 750 of them busy: 75 %, 7.5 CPU seconds
        let cpu = used(before, after, 5.0, 2);
        assert!((cpu.utilisation - 0.75).abs() < 1e-9);
        assert!((cpu.busy_seconds - 7.5).abs() < 1e-9);
        assert!((floor_seconds(cpu.busy_seconds, 2) - 3.75).abs() < 1e-9);
    }

    #[test]
    fn a_process_ticks_are_its_user_and_system_time() {
        let stat = "4242 (python -m x) S 1 4242 4242 0 -1 4194560 9 0 0 0 700 55 3 4 20 0";
        assert_eq!(parse_process_stat(stat), Some(755));
        assert_eq!(parse_process_stat("4242 (python"), None);
        // 2,000 ticks of the machine on 2 cores in 10 s are 100 a second per core: 500 ticks
        // of the process are 5 s
        let machine = (
            CpuReading { busy: 0, total: 0 },
            CpuReading {
                busy: 0,
                total: 2000,
            },
        );
        assert!((process_seconds((100, 600), machine, 10.0, 2) - 5.0).abs() < 1e-9);
    }

    #[test]
    fn this_machine_has_counters() {
        let (a, b) = (read().unwrap(), read().unwrap());
        assert!(b.total >= a.total && a.total > 0 && a.busy <= a.total);
        assert!(read_process(std::process::id()).is_some());
        let usage = Mark::now(Some(std::process::id())).usage().unwrap();
        assert!(usage.process_seconds.is_some() && usage.cores > 0);
    }
}
