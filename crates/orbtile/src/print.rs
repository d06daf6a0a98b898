//! The request-printing mode for adapter authors (what the spec's mock
//! does): every request and the answer it got, one JSON line each, with the
//! message text left out (the token is never in a body).

use serde_json::{Value, json};

use crate::server::Exchange;

/// One exchange as a JSON line: `{"method", "path", "status", "request",
/// "response"}`, bodies parsed (a body that is not JSON is shown as a
/// string), every `message.text` replaced by its length.
pub fn describe_exchange(exchange: &Exchange<'_>) -> String {
    let mut request = if exchange.request_body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(exchange.request_body).unwrap_or_else(|_| {
            Value::String(format!("<{} bytes, not JSON>", exchange.request_body.len()))
        })
    };
    redact_messages(&mut request);
    let response = exchange.response_body.map_or(Value::Null, |b| {
        serde_json::from_str(b).unwrap_or(Value::Null)
    });
    json!({
        "method": exchange.method,
        "path": exchange.target,
        "status": exchange.status,
        "request": request,
        "response": response,
    })
    .to_string()
}

/// Replaces the `text` of every `message` object with `<N bytes left out>`.
fn redact_messages(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "message"
                    && let Some(Value::String(text)) = child.get_mut("text")
                {
                    *text = format!("<{} bytes left out>", text.len());
                }
                redact_messages(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_messages),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_text_is_left_out_everywhere() {
        let body = br#"{"title":"t","message":{"id":"m","text":"secret words"},"sessions":[{"message":{"id":"x","text":"more"}}]}"#;
        let line = describe_exchange(&Exchange {
            method: "POST",
            target: "/a/v1/adapters/dev.x/sessions/s",
            request_body: body,
            status: 200,
            response_body: Some(r#"{"session":{"uid":"u","visible":true}}"#),
        });
        assert!(!line.contains("secret") && !line.contains("more"), "{line}");
        let doc: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(doc["request"]["message"]["text"], "<12 bytes left out>");
        assert_eq!(doc["request"]["title"], "t");
        assert_eq!(doc["response"]["session"]["visible"], true);
        assert_eq!(doc["status"], 200);
        let line = describe_exchange(&Exchange {
            method: "PUT",
            target: "/a/v1/adapters/dev.x",
            request_body: b"{not json",
            status: 400,
            response_body: None,
        });
        assert!(line.contains("<9 bytes, not JSON>"), "{line}");
    }
}
