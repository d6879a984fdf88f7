//! `--format text|json|csv`: the flag every reporting command shares. The renderings live
//! beside each report's model; the JSON envelope and CSV spelling are the runtime's own
//! (`amdhip64::trace::schema`), so the stats at exit and the CLI write one schema.

pub use amdhip64::config::OutputFormat;

#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct FormatArg {
    /// Output format: text (the table), json (one `hipshim.<kind>` document, schema_version
    /// 1) or csv (one record per table row, where the output is a table).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = parse_format)]
    pub format: OutputFormat,
}

pub fn parse_format(text: &str) -> Result<OutputFormat, String> {
    OutputFormat::parse(text).ok_or_else(|| format!("accepted forms: {}", OutputFormat::ACCEPTED))
}

/// The exit code of asking for csv where the output is not one table: a usage error, said
/// plainly.
pub fn no_csv(command: &str) -> i32 {
    eprintln!("hipshim: {command} is not a table, so it has no csv form; use --format json");
    2
}
