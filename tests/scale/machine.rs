//! How much of this machine a run used (`make bench-scale`): the CPU time every process spent
//! between two readings of `/proc/stat`, so that a burst's completion can be set against the
//! time the machine's cores alone need for that work, beside the time the quotas force. A run
//! whose CPU floor is above its quota-bound ideal is bound by the machine, not by the design.

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
    fn this_machine_has_counters() {
        let (a, b) = (read().unwrap(), read().unwrap());
        assert!(b.total >= a.total && a.total > 0 && a.busy <= a.total);
    }
}
