//! A recorded-response HTTP server for tests of failure shapes a real model will not
//! produce on demand: 5xx and 429, hangs past a deadline, bodies cut short, garbage,
//! servers that refuse `response_format`. Real-model behaviour is tested against a real
//! llama.cpp server; this exists only for the rest.
//!
//! Plain threads and `std::net`, so any test — async or not, in any crate — can start one.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Scripted {
    /// A complete HTTP response.
    Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Read the request, then say nothing until the server is dropped (or 60 s).
    Hang,
    /// Declare a longer body than is sent, then close the connection.
    Cut(String),
}

impl Scripted {
    /// A 200 chat completion whose message content is `content`.
    pub fn completion(content: &str) -> Self {
        Self::completion_with(content, "stop")
    }

    /// A 200 chat completion with a chosen finish reason.
    pub fn completion_with(content: &str, finish_reason: &str) -> Self {
        let body = serde_json::json!({
            "id": "replay",
            "object": "chat.completion",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason
            }],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        });
        Self::json(200, &body.to_string())
    }

    /// A response with a JSON body.
    pub fn json(status: u16, body: &str) -> Self {
        Self::Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }
}

/// What a request looked like when it arrived.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A running server; stops when dropped.
pub struct Replay {
    addr: SocketAddr,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
}

impl Replay {
    /// Serves `script` in order on 127.0.0.1; the last item repeats once it runs out.
    pub fn start(script: Vec<Scripted>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let script = Arc::new(Mutex::new((script, 0usize)));
        {
            let (recorded, stop) = (recorded.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let item = {
                        let Ok(mut s) = script.lock() else { break };
                        let (items, next) = &mut *s;
                        let item = items
                            .get((*next).min(items.len().saturating_sub(1)))
                            .cloned();
                        *next += 1;
                        item
                    };
                    let (recorded, stop) = (recorded.clone(), stop.clone());
                    std::thread::spawn(move || serve(stream, item, &recorded, &stop));
                }
            });
        }
        Ok(Self {
            addr,
            recorded,
            stop,
        })
    }

    /// `http://127.0.0.1:PORT/v1`, ready for `--llm-base-url`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// An endpoint for `PROVIDER/MODEL` on this server, with the built-in settings and
    /// the given deadline.
    pub fn endpoint(
        &self,
        model: &str,
        timeout: std::time::Duration,
    ) -> Result<crate::Endpoint, crate::LlmError> {
        let overrides = crate::Overrides {
            base_url: Some(self.base_url()),
            api_key_env: None,
            timeout: Some(timeout),
        };
        crate::Config::builtin().endpoint(Some(model), &overrides)
    }

    /// Requests received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.recorded.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(
    stream: TcpStream,
    item: Option<Scripted>,
    recorded: &Mutex<Vec<Recorded>>,
    stop: &AtomicBool,
) {
    let Ok(mut write) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() || first.is_empty() {
        return;
    }
    let path = first
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    if let Ok(mut r) = recorded.lock() {
        r.push(Recorded {
            path,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
        });
    }
    match item {
        None => {}
        Some(Scripted::Reply {
            status,
            headers,
            body,
        }) => {
            let mut head = format!(
                "HTTP/1.1 {status} Scripted\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = write.write_all(head.as_bytes());
            let _ = write.write_all(body.as_bytes());
        }
        Some(Scripted::Hang) => {
            let until = Instant::now() + Duration::from_mins(1);
            while !stop.load(Ordering::SeqCst) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Some(Scripted::Cut(partial)) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                partial.len() + 500
            );
            let _ = write.write_all(head.as_bytes());
            let _ = write.write_all(partial.as_bytes());
        }
    }
    let _ = write.flush();
}
