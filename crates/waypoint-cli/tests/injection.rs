//! The injection corpus (docs/security.md, "Injection corpus"): every request of
//! `fixtures/injection/corpus.jsonl` goes through `waypoint plan` and `waypoint run --yes`
//! (the built binary) over the catalog of `fixtures/injection/catalog/` — command tools,
//! HTTP tools, MCP servers over HTTP and, when `scripts/mcp-peers install` has put them
//! there, the real filesystem and memory MCP servers — and the test proves:
//!
//! - **no refused call reaches a socket**: a canary HTTP listener on 127.0.0.1 and `::1`,
//!   which every HTTP tool and URL of the corpus points at in another spelling, records
//!   every connection, and must record none (a redirector on 127.0.0.2, the one address
//!   runs may reach, sends fetches on to the canary in the same spellings, and answers
//!   an HTTP tool whose path must not be climbed with `..`);
//! - **no refused call reaches a process**: every command tool is a wrapper that logs the
//!   `waypoint` process that started it, and no step the run reports refused has a log
//!   line;
//! - **nothing outside the working directory changes or leaks**: the canary files
//!   outside are byte-for-byte the same afterwards, no `pwned` marker (what an injected
//!   `touch pwned` would leave) exists anywhere, and nothing any command printed holds a
//!   canary secret or the canary's reply;
//! - **no panic**: no exit status 101, no "panicked" on standard error, no run past its
//!   deadline.
//!
//! Corpus lines are `{"text", "class"}`; in `text`, `@PORT@` is the canary's port,
//! `@OUTSIDE@` the directory of canary files next to the working directory,
//! `@REDIRECT@` the redirector's base URL (`/r/N` sends to the N-th target of
//! [`redirect_targets`]) and `@REPEAT:N:UNIT@` UNIT written N times. A request holding a
//! NUL byte or longer than 100 kB is given on standard input. With
//! `WAYPOINT_INJECTION_VERBOSE=1` the test prints what each request's run did.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    clippy::too_many_lines,
    reason = "tests fail loudly on purpose"
)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Worker threads running requests at once.
const WORKERS: usize = 3;
/// Longest one `waypoint` process may take before the test calls it a hang.
const DEADLINE: Duration = Duration::from_secs(90);
/// Requests of at least this many bytes go on standard input (argv has a per-argument
/// limit of 128 KiB).
const ON_STDIN: usize = 100_000;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/injection")
}

/// A TCP listener that records every connection and answers each with `reply`.
struct Listener {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Listener {
    fn start(addrs: &[SocketAddr], reply: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        let first = TcpListener::bind(addrs[0]).unwrap();
        let addr = first.local_addr().unwrap();
        let mut sockets = vec![first];
        // The same port on the other addresses (::1 beside 127.0.0.1), where available.
        for extra in &addrs[1..] {
            match TcpListener::bind(SocketAddr::new(extra.ip(), addr.port())) {
                Ok(s) => sockets.push(s),
                Err(e) => eprintln!("note: no listener on {extra}: {e}"),
            }
        }
        let hits = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let reply = Arc::new(reply);
        for socket in sockets {
            socket.set_nonblocking(true).unwrap();
            let (hits, stop, reply) = (hits.clone(), stop.clone(), reply.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match socket.accept() {
                        Ok((conn, peer)) => serve(conn, peer, &hits, reply.as_ref()),
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Self { addr, hits, stop }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(
    mut conn: TcpStream,
    peer: SocketAddr,
    hits: &Mutex<Vec<String>>,
    reply: &(dyn Fn(&str) -> String + Send + Sync),
) {
    // Counted at once, whatever the connection goes on to send.
    let at = {
        let mut hits = hits.lock().unwrap();
        hits.push(format!("{peer}"));
        hits.len() - 1
    };
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    let mut buf = [0u8; 4096];
    let n = conn.read(&mut buf).unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..n]);
    let line = head.lines().next().unwrap_or("").to_string();
    hits.lock().unwrap()[at] = format!("{peer} {line}");
    let _ = conn.write_all(reply(&line).as_bytes());
}

/// Where the redirector sends `/r/N`: the canary in the spellings of the corpus, a
/// metadata address, other schemes, another hop, a loop.
fn redirect_targets(port: u16, redirector: u16) -> Vec<String> {
    vec![
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://017700000001:{port}/"),
        format!("http://127.1:{port}/"),
        "http://169.254.169.254/latest/meta-data/".into(),
        format!("http://0.0.0.0:{port}/"),
        format!("http://user@127.0.0.1:{port}/"),
        format!("//127.0.0.1:{port}/x"),
        format!("http://127.0.0.2:{redirector}/r/0"),
        "file:///etc/passwd".into(),
        format!("gopher://127.0.0.1:{port}/"),
        "/r/15".into(),
    ]
}

/// The directories of one corpus run, and the secrets placed outside the working one.
struct Sandbox {
    root: PathBuf,
    work: PathBuf,
    outside: PathBuf,
    catalog: PathBuf,
    spawn_log: PathBuf,
    secrets: Vec<String>,
    mcp: bool,
    _dir: tempfile::TempDir,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn nonce() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    format!("{:x}{:x}", t.as_nanos(), std::process::id())
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn git(work: &Path, args: &[&str]) {
    let _ = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.test"])
        .args(args)
        .current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Sandbox {
    fn new(port: u16, redirector: u16, peers: Option<&Path>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (work, outside) = (root.join("work"), root.join("outside"));
        let secrets = vec![
            format!("CANARY-SECRET-{}", nonce()),
            format!("CANARY-KEY-{}", nonce()),
        ];
        write(&outside.join("secret.txt"), &format!("{}\n", secrets[0]));
        write(
            &outside.join(".ssh/id_rsa"),
            &format!("-----BEGIN KEY-----\n{}\n", secrets[1]),
        );
        write(&work.join("notes/todo.txt"), "buy milk\ndraft the report\n");
        write(&work.join("README.md"), "# notes\nstruct Router;\n");
        std::os::unix::fs::symlink(&outside, work.join("escape")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), work.join("secret-link")).unwrap();
        // A FIFO nobody writes to and a sparse file past every read limit.
        let _ = std::process::Command::new("mkfifo")
            .arg(work.join("pipe"))
            .status();
        std::fs::File::create(work.join("big.bin"))
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        git(&work, &["init", "-q"]);
        git(&work, &["commit", "-q", "--allow-empty", "-m", "init"]);

        let bin = root.join("bin");
        let spawn_log = root.join("spawn.log");
        let catalog = root.join("catalog");
        std::fs::create_dir_all(&catalog).unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures().join("catalog"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let mut mcp = false;
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            if text.contains("@PEERS@") {
                let Some(peers) = peers else { continue };
                mcp = true;
                let text = text
                    .replace("@PEERS@", &peers.display().to_string())
                    .replace("@WORKDIR@", &work.display().to_string())
                    .replace("@MEMORY@", &root.join("memory.jsonl").display().to_string());
                std::fs::write(catalog.join(&name), text).unwrap();
                continue;
            }
            for (tool, program) in wrapped(&text) {
                let real = which(&program).map_or(program.clone(), |p| p.display().to_string());
                let path = bin.join(&tool).join(&program);
                write(
                    &path,
                    &format!(
                        "#!/bin/sh\necho \"$PPID {tool}\" >> '{}'\nexec '{real}' \"$@\"\n",
                        spawn_log.display()
                    ),
                );
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            let text = text
                .replace("@BIN@", &bin.display().to_string())
                .replace("@PORT@", &port.to_string())
                .replace("@REDIRECT_PORT@", &redirector.to_string());
            std::fs::write(catalog.join(&name), text).unwrap();
        }
        // The redirector's address is the one destination runs may reach.
        write(
            &root.join("allow.toml"),
            "[run]\nallow_hosts = [\"127.0.0.2\"]\n",
        );
        write(
            &root.join("control.toml"),
            "[run]\nallow_hosts = [\"127.0.0.1\"]\n",
        );
        std::fs::create_dir_all(root.join("stores")).unwrap();
        Self {
            root,
            work,
            outside,
            catalog,
            spawn_log,
            secrets,
            mcp,
            _dir: dir,
        }
    }

    /// The spawn log as (pid of the `waypoint` that started it, tool) pairs.
    fn spawns(&self) -> Vec<(u32, String)> {
        std::fs::read_to_string(&self.spawn_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (pid, tool) = l.split_once(' ')?;
                Some((pid.parse().ok()?, tool.to_string()))
            })
            .collect()
    }
}

/// `(tool, program)` for every `@BIN@/TOOL/PROGRAM` of a catalog file.
fn wrapped(text: &str) -> BTreeSet<(String, String)> {
    text.split("@BIN@/")
        .skip(1)
        .filter_map(|rest| {
            let end = rest.find(['"', '\'', ' ', ',', ']'])?;
            let (tool, program) = rest[..end].split_once('/')?;
            Some((tool.to_string(), program.to_string()))
        })
        .collect()
}

/// Every file and directory under `dir`, symlinks not followed, with what identifies
/// its content.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let rel = p.strip_prefix(dir).unwrap().to_path_buf();
        let what = if meta.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
            "dir".to_string()
        } else if meta.is_symlink() {
            format!("-> {}", std::fs::read_link(&p).unwrap().display())
        } else if meta.is_file() && meta.len() < 1 << 20 {
            format!(
                "{:?} {:?}",
                std::fs::read(&p).unwrap(),
                meta.modified().ok()
            )
        } else {
            format!("{} bytes {:?}", meta.len(), meta.modified().ok())
        };
        out.insert(rel, what);
    }
    out
}

/// Paths under `dir` (symlinks not followed) whose name holds `word`.
fn named(dir: &Path, word: &str) -> Vec<PathBuf> {
    snapshot(dir)
        .into_keys()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().to_lowercase().contains(word))
        })
        .collect()
}

/// What one `waypoint` process did.
struct Outcome {
    pid: u32,
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

/// Runs the binary with `args` (and `input` on standard input), killed past
/// [`DEADLINE`].
fn run_binary(args: &[&str], input: Option<&str>, cwd: &Path, home: &Path) -> Outcome {
    let mut child = common::command(args)
        .current_dir(cwd)
        .env("HOME", home)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    if let Some(text) = input {
        let mut stdin = child.stdin.take().unwrap();
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            timed_out = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        pid,
        code: status.code(),
        stdout: String::from_utf8_lossy(&reader.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned(),
        timed_out,
    }
}

/// One corpus line with its tokens filled in.
struct Request {
    line: usize,
    class: String,
    text: String,
}

fn expand(text: &str, port: u16, outside: &Path, redirector: u16) -> String {
    let mut text = text
        .replace("@PORT@", &port.to_string())
        .replace("@OUTSIDE@", &outside.display().to_string())
        .replace("@REDIRECT@", &format!("http://127.0.0.2:{redirector}"));
    while let Some(start) = text.find("@REPEAT:") {
        let rest = &text[start + "@REPEAT:".len()..];
        let (times, rest) = rest.split_once(':').unwrap();
        let end = rest.find('@').unwrap();
        let unit = rest[..end].repeat(times.parse().unwrap());
        let consumed = start + "@REPEAT:".len() + times.len() + 1 + end + 1;
        text = format!("{}{unit}{}", &text[..start], &text[consumed..]);
    }
    text
}

/// What the corpus run found for one request.
#[derive(Default, Clone)]
struct Tally {
    requests: usize,
    planned: usize,
    runs_ok: usize,
    stopped: usize,
    refused_steps: usize,
    denied_steps: usize,
    requests_refused: usize,
    ok_steps: usize,
    spawned: usize,
}

impl Tally {
    fn add(&mut self, t: &Tally) {
        self.requests += t.requests;
        self.planned += t.planned;
        self.runs_ok += t.runs_ok;
        self.stopped += t.stopped;
        self.refused_steps += t.refused_steps;
        self.denied_steps += t.denied_steps;
        self.requests_refused += t.requests_refused;
        self.ok_steps += t.ok_steps;
        self.spawned += t.spawned;
    }
}

/// One request's plan and run, judged.
struct Done {
    line: usize,
    class: String,
    tally: Tally,
    problems: Vec<String>,
    took: Duration,
}

/// One step of a run report.
struct Step {
    tool: String,
    /// Refused by a Waypoint policy (`refused: …`).
    refused: bool,
    /// Refused by the MCP filesystem server's own confinement.
    denied: bool,
    /// Handed to its adapter: not refused, not skipped.
    called: bool,
}

fn steps(report: &Value) -> Vec<Step> {
    report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let error = s["error"].as_str().unwrap_or("");
            let refused = error.starts_with("refused:");
            let denied = error.contains("Access denied");
            Step {
                tool: s["tool"].as_str().unwrap_or("").to_string(),
                refused,
                denied,
                called: !refused && s["status"] != "skipped",
            }
        })
        .collect()
}

struct Corpus {
    sandbox: Sandbox,
    canary: Listener,
    redirector: Listener,
    canary_reply: String,
}

impl Corpus {
    fn base_args(&self, config: &str) -> Vec<String> {
        vec![
            "--catalog".into(),
            self.sandbox.catalog.display().to_string(),
            "--config".into(),
            self.sandbox.root.join(config).display().to_string(),
        ]
    }

    fn plan(&self, req: &Request, config: &str) -> Outcome {
        let stdin = req.text.contains('\0') || req.text.len() >= ON_STDIN;
        let mut args = self.base_args(config);
        args.extend(["plan".into(), "--json".into(), "--".into()]);
        args.push(if stdin { "-".into() } else { req.text.clone() });
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_binary(
            &args,
            stdin.then_some(req.text.as_str()),
            &self.sandbox.work,
            &self.sandbox.outside,
        )
    }

    fn run(&self, req: &Request, config: &str, worker: usize) -> Outcome {
        let stdin = req.text.contains('\0') || req.text.len() >= ON_STDIN;
        let store = format!(
            "sqlite:{}",
            self.sandbox
                .root
                .join(format!("stores/w{worker}.db"))
                .display()
        );
        let mut args = self.base_args(config);
        args.extend(
            [
                "--store",
                &store,
                "run",
                "--yes",
                "--json",
                "--workdir",
                &self.sandbox.work.display().to_string(),
                "--tool-timeout",
                "5s",
                "--max-wall",
                "45s",
                "--learn-after",
                "1000000",
                "--",
            ]
            .map(String::from),
        );
        args.push(if stdin { "-".into() } else { req.text.clone() });
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_binary(
            &args,
            stdin.then_some(req.text.as_str()),
            &self.sandbox.work,
            &self.sandbox.outside,
        )
    }

    /// What is wrong with what one process printed: a panic, a hang, a leak.
    fn problems(&self, what: &str, req: &Request, o: &Outcome) -> Vec<String> {
        let mut out = Vec::new();
        let at = format!("line {} ({}) {what}", req.line, req.class);
        if o.timed_out {
            out.push(format!("{at}: still running after {DEADLINE:?}"));
        }
        if o.code == Some(101) || o.stderr.contains("panicked") {
            out.push(format!("{at}: panicked: {}", tail(&o.stderr)));
        }
        let printed = format!("{}{}", o.stdout, o.stderr);
        for secret in self.sandbox.secrets.iter().chain([&self.canary_reply]) {
            if printed.contains(secret.as_str()) {
                out.push(format!("{at}: printed the canary `{secret}`"));
            }
        }
        out
    }
}

impl Corpus {
    /// Plans and runs one request, and judges what both printed and started.
    fn request(&self, req: &Request, worker: usize) -> Done {
        let config = "allow.toml";
        let took = Instant::now();
        let mut tally = Tally {
            requests: 1,
            ..Tally::default()
        };
        let plan = self.plan(req, config);
        let mut problems = self.problems("plan", req, &plan);
        tally.planned = usize::from(plan.code == Some(0));
        let run = self.run(req, config, worker);
        problems.extend(self.problems("run", req, &run));
        let report: Value = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
        match report["status"].as_str() {
            Some("ok") => tally.runs_ok = 1,
            Some(_) => tally.stopped = 1,
            None => {}
        }
        if std::env::var_os("WAYPOINT_INJECTION_VERBOSE").is_some() {
            verbose(req, &report);
        }
        let steps = steps(&report);
        tally.refused_steps = steps.iter().filter(|s| s.refused).count();
        tally.denied_steps = steps.iter().filter(|s| s.denied).count();
        tally.requests_refused = usize::from(tally.refused_steps > 0);
        tally.ok_steps = report["steps"]
            .as_array()
            .map_or(0, |s| s.iter().filter(|s| s["status"] == "ok").count());
        // No refused call started a process: the processes this run started, per tool,
        // are no more than its calls that were not refused.
        let spawned: Vec<String> = self
            .sandbox
            .spawns()
            .into_iter()
            .filter(|(pid, _)| *pid == run.pid)
            .map(|(_, tool)| tool)
            .collect();
        tally.spawned = spawned.len();
        for tool in spawned.iter().collect::<BTreeSet<_>>() {
            let started = spawned.iter().filter(|t| *t == tool).count();
            let called = steps.iter().filter(|s| s.tool == *tool && s.called).count();
            if started > called {
                problems.push(format!(
                    "line {} ({}): `{tool}` started {started} process(es) for {called} call(s) not refused: {}",
                    req.line, req.class, run.stdout
                ));
            }
        }
        Done {
            line: req.line,
            class: req.class.clone(),
            tally,
            problems,
            took: took.elapsed(),
        }
    }
}

/// One line per request: what its run did (`WAYPOINT_INJECTION_VERBOSE`).
fn verbose(req: &Request, report: &Value) {
    let summary: Vec<String> = report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let error: String = s["error"].as_str().unwrap_or("").chars().take(90).collect();
            format!("{} {} {error}", s["tool"], s["status"])
        })
        .collect();
    eprintln!(
        "line {} {} {:?}: {} {summary:?}",
        req.line,
        req.class,
        req.text.chars().take(70).collect::<String>(),
        report["status"]
    );
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}

fn read_corpus(c: &Corpus) -> Vec<Request> {
    let text = std::fs::read_to_string(fixtures().join("corpus.jsonl")).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            Request {
                line: i + 1,
                class: v["class"].as_str().unwrap().to_string(),
                text: expand(
                    v["text"].as_str().unwrap(),
                    c.canary.port(),
                    &c.sandbox.outside,
                    c.redirector.port(),
                ),
            }
        })
        .collect()
}

/// The detectors work: an allowed fetch reaches the canary and prints its reply, a
/// command tool's start is logged with the `waypoint` that started it.
fn controls(c: &Corpus) {
    let req = Request {
        line: 0,
        class: "control".into(),
        text: format!("fetch http://127.0.0.1:{}/control", c.canary.port()),
    };
    let o = c.run(&req, "control.toml", 0);
    assert!(
        o.stdout.contains(&c.canary_reply),
        "the control fetch did not reach the canary: {}\n{}",
        o.stdout,
        o.stderr
    );
    assert_eq!(c.canary.hits().len(), 1, "{:?}", c.canary.hits());
    // A connection to 0.0.0.0 or [::] lands on the canary too, so it would be counted.
    let mut connected = 1;
    for addr in ["0.0.0.0", "::"] {
        let ip: std::net::IpAddr = addr.parse().unwrap();
        let to = SocketAddr::new(ip, c.canary.port());
        if let Ok(mut conn) = TcpStream::connect_timeout(&to, Duration::from_secs(2)) {
            let _ = conn.write_all(b"GET /control HTTP/1.0\r\n\r\n");
            connected += 1;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.canary.hits().len() < connected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(c.canary.hits().len(), connected, "{:?}", c.canary.hits());
    c.canary.hits.lock().unwrap().clear();
    let req = Request {
        line: 0,
        class: "control".into(),
        text: "echo 'control'".into(),
    };
    let o = c.run(&req, "allow.toml", 0);
    assert_eq!(o.code, Some(0), "{}\n{}", o.stdout, o.stderr);
    assert!(
        c.sandbox.spawns().contains(&(o.pid, "echo_text".into())),
        "the control echo was not logged: {:?}",
        c.sandbox.spawns()
    );
}

/// The templates the catalog check refuses (docs/run.md, "Commands and request text"),
/// through the binary: each is an error naming its line.
fn refused_templates() {
    let file = fixtures().join("refused.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let tools = text.matches("  - name: ").count();
    let o = common::waypoint(&["--catalog", &file.display().to_string(), "catalog", "check"]);
    assert_ne!(o.status.code(), Some(0), "{}", common::stdout(&o));
    let err = common::stderr(&o);
    let refused: BTreeSet<&str> = err
        .match_indices("`run.command` of tool `")
        .filter_map(|(i, m)| err[i + m.len()..].split('`').next())
        .collect();
    assert_eq!(refused.len(), tools, "every template is refused:\n{err}");
}

#[test]
fn the_injection_corpus_reaches_no_socket_no_process_and_no_file_outside() {
    let started = Instant::now();
    refused_templates();
    let peers = common::mcp_peers(
        &[
            "@modelcontextprotocol/server-filesystem/dist/index.js",
            "@modelcontextprotocol/server-memory/dist/index.js",
        ],
        "the injection corpus over the real MCP servers",
    );
    let canary_reply = format!("CANARY-HTTP-{}", nonce());
    let body = canary_reply.clone();
    let canary = Listener::start(
        &["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()],
        move |_| {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        },
    );
    let port = canary.port();
    let redirector_port = Arc::new(AtomicUsize::new(0));
    let rp = redirector_port.clone();
    let redirector = Listener::start(&["127.0.0.2:0".parse().unwrap()], move |line| {
        let targets = redirect_targets(port, u16::try_from(rp.load(Ordering::Relaxed)).unwrap());
        let n: usize = line
            .split(' ')
            .nth(1)
            .and_then(|p| p.rsplit('/').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if !line.contains(" /r/") {
            // What the catalogue tool asks for: an answer, no redirect.
            return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".into();
        }
        let to = targets.get(n).cloned().unwrap_or_default();
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    });
    redirector_port.store(usize::from(redirector.port()), Ordering::Relaxed);
    let sandbox = Sandbox::new(port, redirector.port(), peers.as_deref());
    let corpus = Corpus {
        sandbox,
        canary,
        redirector,
        canary_reply,
    };
    controls(&corpus);
    let outside_before = snapshot(&corpus.sandbox.outside);
    let root_before: BTreeSet<PathBuf> = std::fs::read_dir(&corpus.sandbox.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into())
        .collect();
    let spawns_before = corpus.sandbox.spawns().len();

    let requests = read_corpus(&corpus);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Done>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for worker in 1..=WORKERS {
            let (corpus, requests, next, results) = (&corpus, &requests, &next, &results);
            scope.spawn(move || {
                while let Some(req) = requests.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let done = corpus.request(req, worker);
                    results.lock().unwrap().push(done);
                }
            });
        }
    });

    let results = results.into_inner().unwrap();
    let mut by_class: BTreeMap<String, Tally> = BTreeMap::new();
    let mut problems: Vec<String> = Vec::new();
    let mut slowest: Vec<(Duration, usize)> = results.iter().map(|r| (r.took, r.line)).collect();
    slowest.sort_unstable_by(|a, b| b.cmp(a));
    for done in &results {
        by_class
            .entry(done.class.clone())
            .or_default()
            .add(&done.tally);
        problems.extend(done.problems.iter().cloned());
    }

    // Nothing reached the canary, in any spelling, directly or through a redirect (a
    // connection left in the backlog by a process that has exited is accepted first).
    std::thread::sleep(Duration::from_millis(200));
    let hits = corpus.canary.hits();
    if !hits.is_empty() {
        problems.push(format!("the canary was reached: {hits:?}"));
    }
    // The one reachable host saw only the paths its tools and the corpus name: no value
    // climbed out of an HTTP tool's path with `..`.
    for hit in corpus.redirector.hits() {
        let target = hit.split(' ').nth(2).unwrap_or("");
        if !(target.starts_with("/r/") || target.starts_with("/items/")) {
            problems.push(format!("the redirector was asked for `{target}`: {hit}"));
        }
    }
    // Nothing outside the working directory changed, and no injected command ran.
    let outside_after = snapshot(&corpus.sandbox.outside);
    if outside_after != outside_before {
        let changed: Vec<_> = outside_after
            .iter()
            .filter(|(k, v)| outside_before.get(*k) != Some(v))
            .map(|(k, _)| k)
            .chain(
                outside_before
                    .keys()
                    .filter(|k| !outside_after.contains_key(*k)),
            )
            .collect();
        problems.push(format!(
            "files outside the working directory changed: {changed:?}"
        ));
    }
    let root_after: BTreeSet<PathBuf> = std::fs::read_dir(&corpus.sandbox.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into())
        .collect();
    let expected_new: BTreeSet<PathBuf> = ["spawn.log", "memory.jsonl"].map(PathBuf::from).into();
    let new: Vec<_> = root_after
        .difference(&root_before)
        .filter(|p| !expected_new.contains(*p))
        .collect();
    if !new.is_empty() {
        problems.push(format!("new files next to the working directory: {new:?}"));
    }
    let markers = named(&corpus.sandbox.root, "pwned");
    if !markers.is_empty() {
        problems.push(format!("an injected command left its marker: {markers:?}"));
    }
    for outside in ["/tmp/evil-waypoint-dir", "/tmp/pwned"] {
        if Path::new(outside).exists() {
            problems.push(format!("{outside} exists"));
        }
    }

    let total = by_class.values().fold(Tally::default(), |mut a, t| {
        a.add(t);
        a
    });
    eprintln!(
        "\ninjection corpus: {} requests, MCP servers {}, {} workers, {:.0?}",
        total.requests,
        if corpus.sandbox.mcp { "on" } else { "OFF" },
        WORKERS,
        started.elapsed()
    );
    eprintln!(
        "{:<8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10}",
        "class",
        "requests",
        "planned",
        "run ok",
        "stopped",
        "refused",
        "denied",
        "req. ref.",
        "ok steps",
        "processes"
    );
    for (class, t) in by_class.iter().chain([(&"total".to_string(), &total)]) {
        eprintln!(
            "{class:<8} {:>8} {:>8} {:>7} {:>8} {:>8} {:>8} {:>9} {:>9} {:>10}",
            t.requests,
            t.planned,
            t.runs_ok,
            t.stopped,
            t.refused_steps,
            t.denied_steps,
            t.requests_refused,
            t.ok_steps,
            t.spawned
        );
    }
    let redirects = corpus
        .redirector
        .hits()
        .iter()
        .filter(|h| h.contains(" /r/"))
        .count();
    eprintln!(
        "(refused: steps a Waypoint policy refused; denied: steps the MCP filesystem server refused; req. ref.: requests with a refused step; processes: command tools started)"
    );
    eprintln!(
        "canary connections: {}; redirects followed to the redirector: {redirects}; processes started by the corpus: {}; problems: {}",
        hits.len(),
        corpus.sandbox.spawns().len() - spawns_before,
        problems.len()
    );
    eprintln!(
        "slowest (plan + run): {}",
        slowest
            .iter()
            .take(5)
            .map(|(d, line)| format!("line {line} {d:.1?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for p in &problems {
        eprintln!("PROBLEM {p}");
    }
    assert!(
        total.requests >= 200,
        "the corpus has {} requests",
        total.requests
    );
    assert!(by_class.len() >= 6, "{:?}", by_class.keys());
    assert!(
        total.refused_steps >= 150,
        "only {} steps were refused: the corpus no longer reaches the policies",
        total.refused_steps
    );
    assert!(
        redirects >= 12,
        "the redirect cases did not reach the redirector: {:?}",
        corpus.redirector.hits()
    );
    assert!(problems.is_empty(), "{} problems (above)", problems.len());
}
