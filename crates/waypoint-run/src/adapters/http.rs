//! `run: {http: {url, method}}` and the `http_fetch` built-in.
//!
//! The URL is a template filled from the args (each value percent-encoded); a `GET`
//! sends no body, any other method sends the args as JSON. Only `http` and `https` are
//! allowed; bodies beyond the output cap fail the call. An `Idempotency-Key` header
//! lets a server drop a repeated write. Every hop, redirects included, goes through the
//! destination policy (docs/run.md, Outbound calls).

use std::time::Duration;

use serde_json::{Map, Value, json};
use waypoint_store::MemoryStore;

use super::{Call, Output, ToolError, Toolbox, check_size};
use crate::policy::Destinations;

pub(super) async fn call<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    template: &str,
    method: &str,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    let mut encoded = Map::new();
    for (k, v) in &call.args {
        encoded.insert(
            k.clone(),
            Value::String(percent_encode(&crate::refs::text_of(v))),
        );
    }
    let url = super::fill_template(template, &encoded)?;
    crate::policy::url::check_path(template, &url)?;
    let method = reqwest::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|_| ToolError::Failed(format!("`{method}` is not an HTTP method")))?;
    let body = (method != reqwest::Method::GET).then(|| Value::Object(call.args.clone()));
    send(tb, &url, method, body, call, timeout).await
}

pub(super) async fn get<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    url: &str,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    send(tb, url, reqwest::Method::GET, None, call, timeout).await
}

/// Most redirects one call follows.
const MAX_REDIRECTS: usize = 5;

async fn send<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    url: &str,
    method: reqwest::Method,
    body: Option<Value>,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<Output, ToolError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| ToolError::Failed(format!("bad URL `{url}`: {e}")))?;
    let mut resp = follow(tb, parsed, method, body, call, timeout).await?;
    let status = resp.status();
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let limit = tb.max_output_bytes;
    if let Some(len) = resp.content_length() {
        check_size(usize::try_from(len).unwrap_or(usize::MAX), limit)?;
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ToolError::Failed(format!("{url}: {e}")))?
    {
        bytes.extend_from_slice(&chunk);
        check_size(bytes.len(), limit)?;
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if !status.is_success() {
        let head: String = text.chars().take(200).collect();
        return Err(ToolError::Failed(format!(
            "{url} answered {status}: {head}"
        )));
    }
    let json_body = content_type
        .contains("json")
        .then(|| serde_json::from_str::<Value>(&text).ok())
        .flatten();
    Ok(Output::of(json!({
        "url": url,
        "status": status.as_u16(),
        "content_type": content_type,
        "body": text,
        "json": json_body,
    })))
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Sends the request and follows redirects itself, so that every hop's host is judged
/// by the destination policy and connected to at the addresses that were judged.
async fn follow<M: MemoryStore + 'static>(
    tb: &Toolbox<M>,
    mut url: reqwest::Url,
    mut method: reqwest::Method,
    mut body: Option<Value>,
    call: &Call<'_>,
    timeout: Duration,
) -> Result<reqwest::Response, ToolError> {
    for _ in 0..=MAX_REDIRECTS {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::Denied(format!(
                "only http and https URLs are fetched, not `{}`",
                url.scheme()
            )));
        }
        let addrs = tb.destinations.resolve(&url).await?;
        let client = Destinations::pinned_client(&url, &addrs)
            .map_err(|e| ToolError::Unconfigured(format!("HTTP client: {e}")))?;
        let mut req = client
            .request(method.clone(), url.clone())
            .timeout(timeout)
            .header("Idempotency-Key", &call.idempotency_key);
        if let Some(body) = &body {
            req = req.json(body);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| ToolError::Failed(format!("{url}: {e}")))?;
        let status = resp.status();
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok());
        let Some(location) = location.filter(|_| status.is_redirection()) else {
            return Ok(resp);
        };
        let next = url
            .join(location)
            .map_err(|e| ToolError::Failed(format!("{url} redirects to `{location}`: {e}")))?;
        // As browsers do: a 303, and a 301 or 302 after anything but GET or HEAD,
        // continue as a GET without the body; 307 and 308 repeat the request.
        let to_get = status == reqwest::StatusCode::SEE_OTHER
            || (matches!(status.as_u16(), 301 | 302)
                && method != reqwest::Method::GET
                && method != reqwest::Method::HEAD);
        if to_get {
            method = reqwest::Method::GET;
            body = None;
        }
        url = next;
    }
    Err(ToolError::Failed(format!(
        "{url}: more than {MAX_REDIRECTS} redirects"
    )))
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_percent_encoded() {
        assert_eq!(super::percent_encode("a b/c?"), "a%20b%2Fc%3F");
    }
}
