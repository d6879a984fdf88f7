//! Log output through `tracing`, filtered by `HIPSHIM_LOG` (e.g. `debug` for API calls,
//! `trace` for packets and doorbells). When unset only warnings and errors are printed.

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
}
