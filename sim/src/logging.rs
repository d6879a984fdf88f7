//! `tracing` output for hsasim, installed only when `HSASIM_LOG` is set. The HIP runtime in
//! the same process may already own the global subscriber; then its settings win.

pub fn init(filter: Option<&str>) {
    if let Some(filter) = filter {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .try_init();
    }
}
