//! One HTTP listener for MCP (streamable HTTP at `/mcp`) and the JSON API (`/v1/*`),
//! behind the same guards.
//!
//! Guards, outermost first: count the request; check the `Host` header (DNS-rebinding
//! defence for loopback servers); then, except on `/healthz` and `/metrics` (which must
//! answer while the server is saturated), refuse with 503 when `max_concurrent`
//! requests are already in flight, instead of queueing without bound, and answer 503
//! after `request_timeout_ms`; then, on `/v1/*` and `/mcp`, find the caller from the
//! bearer token, refuse with 429 a caller over `max_rate_per_caller` requests a second
//! or already at `max_concurrent_per_caller`, read the body within `body_timeout_ms`
//! (408 after), refuse browser requests from
//! other sites (CSRF: a `--no-auth` server would otherwise run tools for any web page
//! its user opens) and JSON API bodies not declared `application/json` (the one type a
//! page cannot send cross-site without a preflight). Bodies are capped at
//! `max_body_bytes`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::api::{self, ApiError};
use crate::auth::Auth;
use crate::mcp::{ServeError, WaypointMcp};
use crate::metrics::Refusal;
use crate::ops::Server;
use crate::rate::Buckets;
use waypoint_app::ServeConfig;

/// What the guards need, shared by every request.
struct Guards {
    app: Arc<Server>,
    auth: Auth,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    slots: Arc<Semaphore>,
    timeout: Duration,
    /// Each caller's own slots, made on its first request (callers are the configured
    /// ones, or the one local caller, so the map stays small).
    per_caller: Mutex<HashMap<String, Arc<Semaphore>>>,
    per_caller_max: usize,
    /// Each caller's request rate, when `max_rate_per_caller` is set.
    rates: Option<Buckets>,
    body_timeout: Duration,
    max_body_bytes: usize,
}

impl Guards {
    fn caller_slots(&self, caller: &str) -> Arc<Semaphore> {
        self.per_caller
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(caller.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_caller_max)))
            .clone()
    }
}

/// The router for `app` under `config`; `auth` says who callers are.
pub fn router(
    app: Arc<Server>,
    config: &ServeConfig,
    auth: Auth,
    stop: CancellationToken,
) -> Router {
    let guards = Arc::new(Guards {
        app: app.clone(),
        auth,
        allowed_hosts: config.allowed_hosts.clone(),
        allowed_origins: config.allowed_origins.clone(),
        slots: Arc::new(Semaphore::new(config.max_concurrent)),
        timeout: Duration::from_millis(config.request_timeout_ms),
        per_caller: Mutex::new(HashMap::new()),
        per_caller_max: config.per_caller(),
        rates: config.max_rate_per_caller.map(Buckets::new),
        body_timeout: Duration::from_millis(config.body_timeout_ms),
        max_body_bytes: config.max_body_bytes,
    });
    let mcp_app = app.clone();
    let local = config.local_caller.clone();
    // Stateless: every POST carries its own request, so any instance behind a balancer
    // can answer any call, and nothing is kept between them.
    let mut mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        // The host guard below already checked `Host`, against the configured list.
        .disable_allowed_hosts()
        .with_cancellation_token(stop);
    mcp_config.max_request_body_bytes = config.max_body_bytes;
    let mcp = StreamableHttpService::new(
        move || Ok(WaypointMcp::new(mcp_app.clone(), local.clone())),
        Arc::new(NeverSessionManager::default()),
        mcp_config,
    );
    let authed = Router::new()
        .route("/v1/plan", post(api::plan))
        .route("/v1/route", post(api::route))
        .route("/v1/understand", post(api::understand))
        .route("/v1/runs", post(api::submit).get(api::runs))
        .route("/v1/runs/{run_id}", get(api::run_status))
        .route("/v1/runs/{run_id}/approve", post(api::approve))
        .route("/v1/runs/{run_id}/resume", post(api::resume))
        .route("/v1/runs/{run_id}/cancel", post(api::cancel))
        .route("/v1/history", get(api::history).delete(api::forget))
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(guards.clone(), same_origin))
        .layer(middleware::from_fn_with_state(guards.clone(), read_body))
        .layer(middleware::from_fn_with_state(guards.clone(), authenticate));
    let limited = Router::new()
        .route("/openapi.json", get(api::openapi))
        .merge(authed)
        .fallback(not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(middleware::from_fn_with_state(guards.clone(), limit));
    Router::new()
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .merge(limited)
        .layer(middleware::from_fn_with_state(guards.clone(), hosts))
        .layer(middleware::from_fn_with_state(guards, observe))
        .with_state(app)
}

async fn not_found(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no endpoint {} {}; see /openapi.json for the API and /mcp for MCP",
            req.method(),
            req.uri().path()
        ),
    )
}

/// The route a path belongs to, as metrics label it (never the raw path, whose run
/// ids would make a series per run).
fn route_label(path: &str) -> &'static str {
    const KNOWN: [&str; 9] = [
        "/v1/plan",
        "/v1/route",
        "/v1/understand",
        "/v1/history",
        "/v1/runs",
        "/mcp",
        "/healthz",
        "/metrics",
        "/openapi.json",
    ];
    if path.starts_with("/v1/runs/") {
        if path.ends_with("/approve") {
            return "/v1/runs/{run_id}/approve";
        }
        return "/v1/runs/{run_id}";
    }
    KNOWN
        .iter()
        .find(|k| path == **k || path.strip_prefix(**k).is_some_and(|r| r.starts_with('/')))
        .copied()
        .unwrap_or("other")
}

async fn observe(State(g): State<Arc<Guards>>, req: Request, next: Next) -> Response {
    let route = route_label(req.uri().path());
    let started = Instant::now();
    g.app.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    let response = next.run(req).await;
    g.app.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
    g.app
        .metrics
        .observe(route, response.status().as_u16(), started.elapsed());
    response
}

fn host_allowed(allowed: &[String], host: &str) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let name = host
        .strip_prefix('[')
        .and_then(|h| h.split_once(']').map(|(n, _)| n))
        .unwrap_or_else(|| host.rsplit_once(':').map_or(host, |(n, _)| n));
    allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name))
}

async fn hosts(State(g): State<Arc<Guards>>, req: Request, next: Next) -> Response {
    let host = request_host(&req);
    if !host_allowed(&g.allowed_hosts, host) {
        g.app.metrics.refuse(Refusal::Host);
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            format!("host `{host}` is not in this server's allowed_hosts"),
        )
        .into_response();
    }
    next.run(req).await
}

async fn limit(State(g): State<Arc<Guards>>, req: Request, next: Next) -> Response {
    let Ok(_slot) = g.slots.clone().try_acquire_owned() else {
        g.app.metrics.refuse(Refusal::Busy);
        let mut r = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "the server is answering as many requests as it allows (max_concurrent); retry shortly",
        )
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    if let Ok(r) = tokio::time::timeout(g.timeout, next.run(req)).await {
        r
    } else {
        g.app.metrics.refuse(Refusal::Timeout);
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!(
                "the request took longer than {} ms (request_timeout_ms)",
                g.timeout.as_millis()
            ),
        )
        .into_response()
    }
}

/// The host a request names: its `Host` header, else the URI's authority.
fn request_host(req: &Request) -> &str {
    req.headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or_else(|| {
            req.uri()
                .authority()
                .map(axum::http::uri::Authority::as_str)
        })
        .unwrap_or("")
}

/// Whether a browser page at `origin` may call a server reached as `host`: its own
/// origin (over HTTP, or HTTPS behind a proxy), or one the config lists.
fn origin_allowed(allowed: &[String], host: &str, origin: &str) -> bool {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let origin = origin.as_str();
    let own = |scheme: &str| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|rest| !host.is_empty() && rest.eq_ignore_ascii_case(host))
    };
    own("http://")
        || own("https://")
        || allowed
            .iter()
            .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
}

/// Whether a `Content-Type` value is JSON (parameters such as `charset` aside).
fn is_json(content_type: Option<&str>) -> bool {
    content_type
        .and_then(|c| c.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// The CSRF guard. A browser sends `Origin` (and `Sec-Fetch-Site`) with every
/// cross-site POST, and can send `text/plain` bodies cross-site without asking the
/// server first; tokens do not help a `--no-auth` server, so the origin must.
async fn same_origin(State(g): State<Arc<Guards>>, req: Request, next: Next) -> Response {
    let host = request_host(&req);
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .map(|o| o.to_str().unwrap_or("<not text>"));
    let cross_site = req
        .headers()
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("cross-site"));
    let refused = match origin {
        Some(o) => !origin_allowed(&g.allowed_origins, host, o),
        None => cross_site,
    };
    if refused {
        g.app.metrics.refuse(Refusal::Origin);
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "origin_not_allowed",
            format!(
                "a cross-site browser request (Origin `{}`) is refused; list the origin under [serve] allowed_origins to allow it (docs/server.md)",
                origin.unwrap_or("none")
            ),
        )
        .into_response();
    }
    let json_api = req.uri().path().starts_with("/v1/");
    if json_api
        && req.method() == axum::http::Method::POST
        && !is_json(
            req.headers()
                .get(header::CONTENT_TYPE)
                .and_then(|c| c.to_str().ok()),
        )
    {
        g.app.metrics.refuse(Refusal::MediaType);
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be sent as `Content-Type: application/json`",
        )
        .into_response();
    }
    next.run(req).await
}

/// Reads the whole body before the handler runs, within `body_timeout`: a body sent a
/// byte at a time would otherwise hold its slots until `request_timeout_ms`.
async fn read_body(State(g): State<Arc<Guards>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, g.max_body_bytes);
    let bytes = match tokio::time::timeout(g.body_timeout, read).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            // Over the limit (the usual case), or the client went away mid-body.
            return ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                format!(
                    "the body is over {} bytes (max_body_bytes), or it was cut off",
                    g.max_body_bytes
                ),
            )
            .into_response();
        }
        Err(_) => {
            g.app.metrics.refuse(Refusal::Timeout);
            return ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "timeout",
                format!(
                    "the body did not arrive within {} ms (body_timeout_ms)",
                    g.body_timeout.as_millis()
                ),
            )
            .into_response();
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

async fn authenticate(State(g): State<Arc<Guards>>, mut req: Request, next: Next) -> Response {
    let header = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok());
    match g.auth.caller(header) {
        Ok(caller) => {
            if let Some(rates) = &g.rates
                && let Err(wait) = rates.take(&caller.0, Instant::now())
            {
                g.app.metrics.refuse(Refusal::RateLimited);
                let mut r = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    format!(
                        "caller `{}` sent more than {} requests a second (max_rate_per_caller); retry after {} ms",
                        caller.0,
                        g.rates.as_ref().map_or(0.0, Buckets::per_second),
                        wait.as_millis().max(1)
                    ),
                )
                .into_response();
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                if let Ok(v) = HeaderValue::from_str(&secs.max(1).to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                return r;
            }
            let Ok(_slot) = g.caller_slots(&caller.0).try_acquire_owned() else {
                g.app.metrics.refuse(Refusal::CallerBusy);
                let mut r = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "caller_busy",
                    format!(
                        "caller `{}` already has {} requests in flight (max_concurrent_per_caller); retry shortly",
                        caller.0, g.per_caller_max
                    ),
                )
                .into_response();
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                return r;
            };
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(why) => {
            g.app.metrics.refuse(Refusal::Auth);
            let mut r =
                ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", why).into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"waypoint\""),
            );
            r
        }
    }
}

/// Serves until `stop` is cancelled (or the process gets SIGINT/SIGTERM from the
/// caller's own handling). Prints the address it listens on, so a port of 0 can be used.
pub async fn serve_http(
    app: Arc<Server>,
    config: &ServeConfig,
    addr: SocketAddr,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    config.check(addr)?;
    let auth = match config.auth {
        waypoint_app::config::serve::AuthMode::Off => Auth::Off(config.local_caller.clone()),
        waypoint_app::config::serve::AuthMode::Tokens => Auth::tokens(config.tokens()?),
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let local = listener.local_addr().map_err(ServeError::Http)?;
    // Runs this server starts must not call back into it.
    app.app.refuse_own_address(local);
    eprintln!("waypoint: serving MCP on http://{local}/mcp and the JSON API on http://{local}/v1/");
    let router = router(app, config, auth, stop.clone());
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
        .map_err(ServeError::Http)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt as _;

    fn app() -> Arc<Server> {
        let loaded = waypoint_catalog::builtin().unwrap();
        let engine =
            waypoint_core::Engine::new(loaded.catalog, waypoint_core::Options::default()).unwrap();
        let live = waypoint_app::Live::fixed(waypoint_app::Snapshot::of(engine));
        Arc::new(Server::new(waypoint_app::App::with(live, None, None)))
    }

    /// A router with one handler that takes `ms`, behind the `limit` guard.
    fn slow_router(ms: u64, max_concurrent: usize, timeout_ms: u64) -> Router {
        let guards = Arc::new(Guards {
            app: app(),
            auth: Auth::Off("local".into()),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            slots: Arc::new(Semaphore::new(max_concurrent)),
            timeout: Duration::from_millis(timeout_ms),
            per_caller: Mutex::new(HashMap::new()),
            per_caller_max: max_concurrent,
            rates: None,
            body_timeout: Duration::from_millis(timeout_ms),
            max_body_bytes: 1 << 20,
        });
        Router::new()
            .route(
                "/slow",
                get(move || async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    "done"
                }),
            )
            .layer(middleware::from_fn_with_state(guards, limit))
    }

    fn get_slow() -> Request {
        Request::builder()
            .uri("/slow")
            .body(axum::body::Body::empty())
            .unwrap()
    }

    #[tokio::test]
    async fn a_request_past_its_time_is_answered_503_timeout() {
        let r = slow_router(5_000, 4, 50).oneshot(get_slow()).await.unwrap();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        let body = axum::body::to_bytes(r.into_body(), 4096).await.unwrap();
        assert!(String::from_utf8_lossy(&body).contains("\"timeout\""));
    }

    #[tokio::test]
    async fn requests_beyond_max_concurrent_are_refused_busy_not_queued() {
        let router = slow_router(300, 1, 5_000);
        let first = tokio::spawn(router.clone().oneshot(get_slow()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let second = router.oneshot(get_slow()).await.unwrap();
        assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(second.headers()[header::RETRY_AFTER], "1");
        assert_eq!(first.await.unwrap().unwrap().status(), StatusCode::OK);
    }

    #[test]
    fn hosts_match_with_or_without_a_port() {
        let allowed = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        assert!(host_allowed(&allowed, "127.0.0.1:8080"));
        assert!(host_allowed(&allowed, "localhost"));
        assert!(host_allowed(&allowed, "[::1]:9000"));
        assert!(!host_allowed(&allowed, "evil.example:8080"));
        assert!(!host_allowed(&allowed, ""));
        assert!(host_allowed(&[], "anything"));
    }

    #[test]
    fn only_the_servers_own_or_listed_origins_are_allowed() {
        let listed = vec!["https://app.example".to_string()];
        assert!(origin_allowed(
            &[],
            "127.0.0.1:8080",
            "http://127.0.0.1:8080"
        ));
        assert!(origin_allowed(
            &[],
            "localhost:8080",
            "HTTP://LOCALHOST:8080"
        ));
        assert!(!origin_allowed(
            &[],
            "127.0.0.1:8080",
            "http://127.0.0.1:9090"
        ));
        assert!(!origin_allowed(&[], "127.0.0.1:8080", "null"));
        assert!(!origin_allowed(&[], "", "http://"));
        assert!(origin_allowed(
            &listed,
            "127.0.0.1:8080",
            "https://app.example"
        ));
        assert!(!origin_allowed(
            &listed,
            "127.0.0.1:8080",
            "https://app.example.evil"
        ));
        assert!(is_json(Some("application/json; charset=utf-8")));
        assert!(!is_json(Some("text/plain")));
        assert!(!is_json(None));
    }

    #[test]
    fn metrics_label_routes_not_paths() {
        assert_eq!(route_label("/v1/runs/run_abc"), "/v1/runs/{run_id}");
        assert_eq!(
            route_label("/v1/runs/run_abc/approve"),
            "/v1/runs/{run_id}/approve"
        );
        assert_eq!(route_label("/v1/runs"), "/v1/runs");
        assert_eq!(route_label("/mcp"), "/mcp");
        assert_eq!(route_label("/v1/planner"), "other");
    }
}
