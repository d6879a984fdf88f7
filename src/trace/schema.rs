//! The envelope and the CSV spelling shared by every machine-readable report (the stats at
//! exit, and the CLI's `--format json|csv`): one rule for all of them, documented in
//! `docs/guide/output-formats.md`.

use serde_json::{Map, Value};

/// Raised on any change a reader of an earlier document could trip on (a field removed,
/// renamed or given another meaning or unit); new fields alone keep it.
pub const SCHEMA_VERSION: u32 = 1;

/// `body`'s fields with `"schema": "hipshim.<kind>"` and `"schema_version"` added,
/// pretty-printed with a final newline (keys in alphabetical order). `body` must be an object
/// (anything else is put under `"value"`).
pub fn document(kind: &str, body: Value) -> String {
    let mut doc = Map::new();
    doc.insert("schema".into(), Value::from(format!("hipshim.{kind}")));
    doc.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
    match body {
        Value::Object(fields) => doc.extend(fields),
        other => {
            doc.insert("value".into(), other);
        }
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(doc))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// One CSV record (RFC 4180): a field with a comma, quote or line break is quoted, its
/// quotes doubled.
pub fn csv_record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = String::new();
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        let field = field.as_ref();
        if field.contains([',', '"', '\n', '\r']) {
            line.push('"');
            line.push_str(&field.replace('"', "\"\""));
            line.push('"');
        } else {
            line.push_str(field);
        }
    }
    line.push('\n');
    line
}

/// A table as CSV: the header, then one record per row.
pub fn csv_table<S: AsRef<str>>(header: &[&str], rows: &[Vec<S>]) -> String {
    let mut out = csv_record(header);
    for row in rows {
        out.push_str(&csv_record(row));
    }
    out
}

/// A CSV table of JSON rows: one record per row, the cells of `columns` read by name (what
/// every bench's csv output is: the same rows as its JSON document, flattened).
pub fn csv_of_json_rows(columns: &[&str], rows: impl IntoIterator<Item = Value>) -> String {
    let records: Vec<Vec<String>> = rows
        .into_iter()
        .map(|row| columns.iter().map(|c| csv_cell(&row[*c])).collect())
        .collect();
    csv_table(columns, &records)
}

/// A cell of a CSV record: numbers as written in JSON, nothing for an absent value, and text
/// on one line (a multi-line reason's lines joined by ` | `), so that every record is one
/// line for line-oriented tools.
pub fn csv_cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) if s.contains('\n') => s
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" | "),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_names_the_kind_and_version_beside_the_body() {
        let doc = document("bench-ops", serde_json::json!({"rows": [1, 2]}));
        let v: Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(v["schema"], "hipshim.bench-ops");
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["rows"][1], 2);
        assert!(doc.ends_with("}\n"));
    }

    #[test]
    fn csv_fields_with_separators_are_quoted() {
        assert_eq!(
            csv_record(&["a", "b,c", "say \"hi\""]),
            "a,\"b,c\",\"say \"\"hi\"\"\"\n"
        );
        assert_eq!(csv_cell(&Value::Null), "");
        assert_eq!(csv_cell(&serde_json::json!(1.5)), "1.5");
        assert_eq!(csv_cell(&serde_json::json!("x")), "x");
        assert_eq!(csv_cell(&serde_json::json!("a:\nb\n")), "a: | b");
    }
}
