//! The debugging endpoints `--profiling` (on by default, as upstream) serves, behind the same
//! authentication and authorization as `/metrics`:
//!
//! - `/debug/pprof/profile?seconds=N`: a CPU profile of the whole process over `N` seconds
//!   (default 30), sampled at 100 Hz, in pprof's gzipped protobuf format, so
//!   `go tool pprof https://host:10257/debug/pprof/profile` works as against
//!   kube-controller-manager. One profile at a time; a second concurrent request gets `500`.
//! - `/debug/pprof` redirects to `/debug/pprof/`, an index of the profiles. Go's runtime
//!   profiles (heap, goroutine, block, mutex, trace, symbol) have no Rust equivalent here:
//!   they answer `404 Unknown profile`, as Go does for a profile it does not have.
//! - `PUT /debug/flags/v` with the new verbosity as body changes `-v` while kcm runs;
//!   `/debug/flags/` lists the settable flags.

use std::sync::Arc;
use std::time::Duration;

use hyper::StatusCode;

use crate::logging::Verbosity;

/// Content type of Go's debug answers.
const TEXT: &str = "text/plain; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";
const OCTETS: &str = "application/octet-stream";

/// The profile's sampling rate, as Go's.
const SAMPLES_PER_SECOND: i32 = 100;
/// The profile length when `seconds` is missing, not a number or not positive, as Go's.
const DEFAULT_SECONDS: u64 = 30;

/// One answer.
#[derive(Debug, PartialEq)]
pub struct Answer {
    /// Status.
    pub status: StatusCode,
    /// Content type.
    pub content_type: &'static str,
    /// Extra headers (redirect target, download name).
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Answer {
    fn text(status: StatusCode, body: impl Into<String>) -> Answer {
        Answer {
            status,
            content_type: TEXT,
            headers: Vec::new(),
            body: body.into().into_bytes(),
        }
    }
}

/// The debugging endpoints.
#[derive(Debug, Clone)]
pub struct Debugging {
    verbosity: Option<Arc<Verbosity>>,
}

impl Debugging {
    /// Endpoints that change `verbosity` on `PUT /debug/flags/v` (without one, for example
    /// when `RUST_LOG` decides, the flag is not settable).
    pub fn new(verbosity: Option<Arc<Verbosity>>) -> Self {
        Debugging { verbosity }
    }

    /// Whether `path` is one of these endpoints.
    pub fn serves(path: &str) -> bool {
        path == "/debug/pprof"
            || path.starts_with("/debug/pprof/")
            || path == "/debug/flags"
            || path.starts_with("/debug/flags/")
    }

    /// Answers one request; `body` is the request body (read only for `PUT`).
    pub async fn respond(
        &self,
        method: &http::Method,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Answer {
        if let (Some(verbosity), "/debug/flags/v") = (&self.verbosity, path) {
            return set_verbosity(verbosity, method, body);
        }
        if path == "/debug/flags" || path.starts_with("/debug/flags/") {
            return flags_index(self.verbosity.is_some());
        }
        if path == "/debug/pprof" {
            return Answer {
                status: StatusCode::FOUND,
                content_type: HTML,
                headers: vec![("location", "/debug/pprof/".to_string())],
                body: b"<a href=\"/debug/pprof/\">Found</a>.\n\n".to_vec(),
            };
        }
        match path.strip_prefix("/debug/pprof/").unwrap_or_default() {
            "" => Answer {
                status: StatusCode::OK,
                content_type: HTML,
                headers: Vec::new(),
                body: PPROF_INDEX.as_bytes().to_vec(),
            },
            "profile" => cpu_profile(seconds(query)).await,
            _ => Answer::text(StatusCode::NOT_FOUND, "Unknown profile\n"),
        }
    }
}

/// `PUT /debug/flags/v`.
fn set_verbosity(verbosity: &Verbosity, method: &http::Method, body: &[u8]) -> Answer {
    if method != http::Method::PUT {
        return Answer::text(StatusCode::NOT_ACCEPTABLE, "unsupported http method");
    }
    let value = String::from_utf8_lossy(body);
    match verbosity.set_from_text(&value) {
        Ok(message) => Answer::text(StatusCode::OK, message),
        Err(message) => Answer::text(StatusCode::BAD_REQUEST, message),
    }
}

/// `seconds` from the query, Go's way: anything but a positive integer means 30.
fn seconds(query: Option<&str>) -> u64 {
    query
        .unwrap_or_default()
        .split('&')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == "seconds")
        .and_then(|(_, v)| v.parse::<i64>().ok())
        .filter(|s| *s > 0)
        .map_or(DEFAULT_SECONDS, |s| s as u64)
}

const PPROF_INDEX: &str = "<html>
<head>
<title>/debug/pprof/</title>
</head>
<body>
/debug/pprof/<br>
<br>
Types of profiles available:
<table>
<thead><td>Count</td><td>Profile</td></thead>
<tr><td></td><td><a href='profile'>profile</a></td></tr>
</table>
<br>
<p>
profile: CPU profile. You can specify the duration in the seconds GET parameter. After you
get the profile file, use the go tool pprof command to investigate the profile.
</p>
</body>
</html>
";

fn flags_index(settable: bool) -> Answer {
    let rows = if settable { "<tr>v<br>\n" } else { "" };
    let body = format!(
        "<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\nflags:<br>\n<table>\n{rows}</table>\n<br>\nfull flags configurable<br>\n</body>\n</html>\n"
    );
    Answer {
        status: StatusCode::OK,
        content_type: HTML,
        headers: Vec::new(),
        body: body.into_bytes(),
    }
}

/// Samples the whole process for `seconds` and answers the gzipped pprof protobuf.
async fn cpu_profile(seconds: u64) -> Answer {
    let guard = match pprof::ProfilerGuardBuilder::default()
        .frequency(SAMPLES_PER_SECOND)
        .blocklist(&["libc", "libgcc", "pthread", "vdso"])
        .build()
    {
        Ok(guard) => guard,
        Err(e) => {
            return Answer::text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Could not enable CPU profiling: {e}\n"),
            );
        }
    };
    tracing::info!(seconds, "CPU profile started");
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let encoded = tokio::task::spawn_blocking(move || encode(&guard)).await;
    match encoded {
        Ok(Ok(bytes)) => {
            tracing::info!(bytes = bytes.len(), "CPU profile served");
            Answer {
                status: StatusCode::OK,
                content_type: OCTETS,
                headers: vec![(
                    "content-disposition",
                    "attachment; filename=\"profile\"".to_string(),
                )],
                body: bytes,
            }
        }
        Ok(Err(e)) => Answer::text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Could not write the CPU profile: {e}\n"),
        ),
        Err(e) => Answer::text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Could not write the CPU profile: {e}\n"),
        ),
    }
}

/// The profile so far as gzipped protobuf.
fn encode(guard: &pprof::ProfilerGuard<'_>) -> Result<Vec<u8>, String> {
    use pprof::protos::Message;
    use std::io::Write;
    let profile = guard
        .report()
        .build()
        .and_then(|report| report.pprof())
        .map_err(|e| e.to_string())?;
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&profile.encode_to_vec())
        .and_then(|()| gzip.finish())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::VModule;

    fn get(d: &Debugging, path: &str, query: Option<&str>) -> Answer {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(d.respond(&http::Method::GET, path, query, b""))
    }

    #[test]
    fn seconds_default_as_go() {
        let cases = [
            (None, 30),
            (Some("seconds=5"), 5),
            (Some("debug=1&seconds=2"), 2),
            (Some("seconds=0"), 30),
            (Some("seconds=-3"), 30),
            (Some("seconds=x"), 30),
            (Some("seconds"), 30),
        ];
        for (query, want) in cases {
            assert_eq!(seconds(query), want, "{query:?}");
        }
    }

    #[test]
    fn index_redirect_and_unknown_profiles() {
        let d = Debugging::new(None);
        let redirect = get(&d, "/debug/pprof", None);
        assert_eq!(redirect.status, StatusCode::FOUND);
        assert_eq!(
            redirect.headers,
            vec![("location", "/debug/pprof/".to_string())]
        );
        let index = get(&d, "/debug/pprof/", None);
        assert_eq!(index.status, StatusCode::OK);
        assert!(String::from_utf8_lossy(&index.body).contains("href='profile'"));
        for name in ["heap", "goroutine", "trace", "symbol", "nonsense"] {
            let a = get(&d, &format!("/debug/pprof/{name}"), None);
            assert_eq!(
                (a.status, a.body.as_slice()),
                (StatusCode::NOT_FOUND, b"Unknown profile\n".as_slice()),
                "{name}"
            );
        }
        assert!(Debugging::serves("/debug/pprof"));
        assert!(Debugging::serves("/debug/flags/v"));
        assert!(!Debugging::serves("/debug"));
        assert!(!Debugging::serves("/debug/pprofx"));
    }

    #[test]
    fn verbosity_is_set_with_put_only() {
        let verbosity = Arc::new(Verbosity::new(0, VModule::default()));
        let d = Debugging::new(Some(verbosity.clone()));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let put =
            |body: &[u8]| rt.block_on(d.respond(&http::Method::PUT, "/debug/flags/v", None, body));
        let ok = put(b"3");
        assert_eq!(ok.status, StatusCode::OK);
        assert_eq!(ok.body, b"successfully set klog.logging.verbosity to 3");
        assert_eq!(verbosity.global(), 3);
        let bad = put(b"x");
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert_eq!(verbosity.global(), 3);
        let got = rt.block_on(d.respond(&http::Method::GET, "/debug/flags/v", None, b""));
        assert_eq!(got.status, StatusCode::NOT_ACCEPTABLE);
        let index = rt.block_on(d.respond(&http::Method::GET, "/debug/flags/", None, b""));
        assert!(String::from_utf8_lossy(&index.body).contains("<tr>v<br>"));
    }

    #[tokio::test]
    async fn cpu_profile_is_gzipped_pprof_and_one_at_a_time() {
        let d = Debugging::new(None);
        // Busy until the profile is done (starting the profiler loads debug symbols, which
        // takes a while in a debug build).
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy = done.clone();
        let spin = std::thread::spawn(move || {
            let mut x = 0u64;
            while !busy.load(std::sync::atomic::Ordering::Relaxed) {
                for _ in 0..100_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
            x
        });
        let first = d.respond(
            &http::Method::GET,
            "/debug/pprof/profile",
            Some("seconds=1"),
            b"",
        );
        let second = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            d.respond(
                &http::Method::GET,
                "/debug/pprof/profile",
                Some("seconds=1"),
                b"",
            )
            .await
        };
        let (first, second) = tokio::join!(first, second);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = spin.join();
        assert_eq!(
            first.status,
            StatusCode::OK,
            "{:?}",
            String::from_utf8_lossy(&first.body)
        );
        assert_eq!(first.content_type, OCTETS);
        assert_eq!(&first.body[..2], &[0x1f, 0x8b], "gzip magic");
        let mut raw = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(first.body.as_slice()),
            &mut raw,
        )
        .expect("gunzip");
        use pprof::protos::Message;
        let profile = pprof::protos::Profile::decode(raw.as_slice()).expect("pprof protobuf");
        assert!(!profile.sample.is_empty(), "a busy process has samples");
        assert!(!profile.string_table.is_empty());
        assert_eq!(second.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(
            String::from_utf8_lossy(&second.body).starts_with("Could not enable CPU profiling"),
            "{:?}",
            String::from_utf8_lossy(&second.body)
        );
    }
}
