//! Tool arguments checked against the tool's own input schema (the one `tools/list`
//! publishes) before anything else runs: unknown arguments and fields, missing required
//! ones, wrong types, integers outside `minimum`/`maximum`, values outside an `enum`,
//! arrays over `maxItems`, recursively into array items and objects. The error names
//! the argument at fault (`facts[1].objet`) and says what it accepts, so a typo never
//! answers ok while losing what was meant. Byte limits (`maxLength`) are checked by the
//! request decoder with the limit in the error (DESIGN.md section 5).

use codectx_errors::Error;
use serde_json::{Map, Value};

/// Checks `arguments` of `tool` against `schema` (an object schema).
pub fn validate(
    tool: &str,
    schema: &Map<String, Value>,
    arguments: &Map<String, Value>,
) -> Result<(), Error> {
    check_object(tool, "", schema, arguments)
}

fn path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

fn shown(text: &str) -> String {
    text.chars().take(64).collect()
}

fn check_object(
    tool: &str,
    at: &str,
    schema: &Map<String, Value>,
    value: &Map<String, Value>,
) -> Result<(), Error> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let known: Vec<&String> = properties.map(|p| p.keys().collect()).unwrap_or_default();
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    if closed && let Some(unknown) = value.keys().find(|k| !known.contains(k)) {
        let field = path(at, &shown(unknown));
        let listed = if known.is_empty() {
            "none".to_owned()
        } else {
            known
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let owner = if at.is_empty() {
            tool.to_owned()
        } else {
            at.to_owned()
        };
        return Err(Error::invalid_argument(
            &field,
            format!(
                "{owner} has no argument {:?}; its arguments are {listed}",
                shown(unknown)
            ),
        ));
    }
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(required) = required.as_str() else {
            continue;
        };
        if value.get(required).is_none_or(Value::is_null) {
            return Err(Error::invalid_argument(
                &path(at, required),
                format!("{} is required", path(at, required)),
            ));
        }
    }
    for (key, inner) in value {
        if let Some(property) = properties
            .and_then(|p| p.get(key))
            .and_then(Value::as_object)
        {
            check_value(tool, &path(at, key), property, inner)?;
        }
    }
    Ok(())
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_u64() || n.is_i64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_value(
    tool: &str,
    at: &str,
    schema: &Map<String, Value>,
    value: &Value,
) -> Result<(), Error> {
    // An absent optional argument may be sent as null.
    if value.is_null() {
        return Ok(());
    }
    let expected = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let fits = match expected {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    if !fits {
        let article = if expected.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return Err(Error::invalid_argument(
            at,
            format!(
                "{at} must be {article} {expected}, not {}",
                type_name(value)
            ),
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let names: Vec<String> = allowed
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        let got = value.as_str().map_or_else(|| value.to_string(), shown);
        return Err(Error::invalid_argument(
            at,
            format!("{at} is one of {}, not {got:?}", names.join(", ")),
        ));
    }
    if let Some(number) = value.as_i64() {
        let minimum = schema.get("minimum").and_then(Value::as_i64);
        let maximum = schema.get("maximum").and_then(Value::as_i64);
        if minimum.is_some_and(|m| number < m) || maximum.is_some_and(|m| number > m) {
            let range = match (minimum, maximum) {
                (Some(low), Some(high)) => format!("from {low} to {high}"),
                (Some(low), None) => format!("at least {low}"),
                (None, Some(high)) => format!("at most {high}"),
                (None, None) => unreachable!("a bound was broken"),
            };
            return Err(Error::invalid_argument(
                at,
                format!("{at} is {number}; it must be {range}"),
            ));
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(most) = schema.get("maxItems").and_then(Value::as_u64)
            && items.len() as u64 > most
        {
            return Err(Error::limit_exceeded(at, items.len() as u64, most, "items"));
        }
        if let Some(item_schema) = schema.get("items").and_then(Value::as_object) {
            for (index, item) in items.iter().enumerate() {
                check_value(tool, &format!("{at}[{index}]"), item_schema, item)?;
            }
        }
    }
    if let Some(object) = value.as_object()
        && expected == "object"
    {
        check_object(tool, at, schema, object)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({
            "type": "object",
            "properties": {
                "entity": {"type": "string"},
                "max_entries": {"type": "integer", "minimum": 1, "maximum": 8},
                "direction": {"type": "string", "enum": ["callers", "callees", "both"]},
                "facts": {"type": "array", "maxItems": 3, "items": {"type": "object",
                    "properties": {"predicate": {"type": "string"}, "object": {"type": "string"}},
                    "required": ["predicate", "object"], "additionalProperties": false}}
            },
            "required": ["entity"],
            "additionalProperties": false
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn check(arguments: Value) -> Result<(), Error> {
        validate("remember", &schema(), arguments.as_object().unwrap())
    }

    #[test]
    fn every_violation_names_the_field_at_fault() {
        for (arguments, field, says) in [
            (
                json!({"entity": "A", "fact": []}),
                "fact",
                "remember has no argument \"fact\"",
            ),
            (json!({}), "entity", "entity is required"),
            (
                json!({"entity": 3}),
                "entity",
                "entity must be a string, not an integer",
            ),
            (
                json!({"entity": "A", "max_entries": 0}),
                "max_entries",
                "max_entries is 0; it must be from 1 to 8",
            ),
            (
                json!({"entity": "A", "max_entries": 9}),
                "max_entries",
                "from 1 to 8",
            ),
            (
                json!({"entity": "A", "max_entries": 1.5}),
                "max_entries",
                "must be an integer, not a number",
            ),
            (
                json!({"entity": "A", "direction": "up"}),
                "direction",
                "direction is one of callers, callees, both, not \"up\"",
            ),
            (
                json!({"entity": "A", "facts": [{"predicate": "p", "objet": "o"}]}),
                "facts[0].objet",
                "facts[0] has no argument \"objet\"",
            ),
            (
                json!({"entity": "A", "facts": [{"predicate": "p"}]}),
                "facts[0].object",
                "facts[0].object is required",
            ),
            (
                json!({"entity": "A", "facts": [{"predicate": "p", "object": 7}]}),
                "facts[0].object",
                "must be a string",
            ),
            (
                json!({"entity": "A", "facts": "owned_by team"}),
                "facts",
                "facts must be an array, not a string",
            ),
            (
                json!({"entity": "A", "facts": [{}, {}, {}, {}]}),
                "facts",
                "the limit is 3 items",
            ),
        ] {
            let error = check(arguments.clone()).expect_err(&arguments.to_string());
            assert_eq!(error.field(), field, "{arguments}: {error}");
            assert!(error.to_string().contains(says), "{arguments}: {error}");
        }
    }

    #[test]
    fn valid_arguments_pass() {
        check(json!({"entity": "A", "max_entries": 8, "direction": "both", "facts": [{"predicate": "p", "object": "o"}]})).unwrap();
        check(json!({"entity": "A", "max_entries": null})).unwrap();
    }
}
