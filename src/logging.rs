//! Log output through `tracing`, filtered by `HIPSHIM_LOG` (e.g. `debug` for API calls,
//! `trace` for packets and doorbells). When unset only warnings and errors are printed.
//!
//! hipshim's structured events use these targets (an `EnvFilter` directive matches a target
//! prefix, so `hipshim=trace` selects all of them, `hipshim::packet=trace` just one):
//!
//! | target | level | event |
//! | --- | --- | --- |
//! | `hipshim::api` | debug | every HIP API call: `api`, `error` if it failed, `dur_ns` |
//! | `hipshim::policy` | info | policy in force, queue created (reason), stream → queue |
//! | `hipshim::queue` | debug | AQL queue created (id, device, size) |
//! | `hipshim::copy` | debug | every copy: engine, bytes, pieces, direction, staged |
//! | `hipshim::launch` | trace | kernel name, grid, block, LDS, kernarg size of a launch |
//! | `hipshim::packet` | trace | every packet published: queue, index, type, barrier bit, grid/workgroup or dependency signals, completion signal |
//! | `hipshim::doorbell` | trace | every doorbell ring: queue, index written |
//! | `hipshim::wait` | trace | every signal wait: signal, condition, total and spin time, blocked or not |
//!
//! Disabled events cost a check of a cached level, no formatting; the timeline and the stats
//! (`HIPSHIM_TRACE`, `HIPSHIM_STATS`) are recorded separately, see `crate::trace`.

pub fn init(filter: Option<&str>) {
    let explicit = filter.is_some();
    let filter =
        tracing_subscriber::EnvFilter::try_new(filter.unwrap_or("warn")).unwrap_or_else(|e| {
            eprintln!("hipshim: ignoring HIPSHIM_LOG: {e}; using warn");
            tracing_subscriber::EnvFilter::new("warn")
        });
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    // Another library in the process may have installed a subscriber already; keep it. Only
    // an explicit HIPSHIM_LOG asks for timestamps: by default a few warnings are all there is.
    let _ = if explicit {
        builder.try_init()
    } else {
        builder.without_time().try_init()
    };
    // The filter is fixed from here on (ours, or another library's subscriber).
    crate::observed::set(
        crate::observed::Watcher::ApiLog,
        tracing::enabled!(target: "hipshim::api", tracing::Level::DEBUG),
    );
}
