//! Log output through `tracing`, filtered by `HIPSHIM_LOG` (e.g. `debug` for API calls,
//! `trace` for packets and doorbells). When unset only warnings and errors are printed.

pub fn init(filter: Option<&str>) {
    let filter =
        tracing_subscriber::EnvFilter::try_new(filter.unwrap_or("warn")).unwrap_or_else(|e| {
            eprintln!("hipshim: ignoring HIPSHIM_LOG: {e}; using warn");
            tracing_subscriber::EnvFilter::new("warn")
        });
    // Another library in the process may have installed a subscriber already; keep it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
