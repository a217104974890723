//! Shared helpers: a tiny raw HTTP/1.1 client so tests see status codes, headers and the
//! exact watch lines, and [`server::Server`], which runs a check on an embedded TestEnv or on
//! a real kube-apiserver (`KCM_SPEC_SERVER`).
#![allow(dead_code)]

pub mod apply;
pub mod crd;
pub mod kubectl;
pub mod server;
pub mod spec;

use std::time::Duration;

use kcm_testenv::{TestCluster, TestEnv};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Where the raw client connects: `host:port` of a plain-HTTP API server.
pub trait Target {
    fn host(&self) -> String;
}

impl Target for TestEnv {
    fn host(&self) -> String {
        self.addr().to_string()
    }
}

impl Target for TestCluster {
    fn host(&self) -> String {
        self.env().host()
    }
}

/// A test cluster of the API server alone.
pub async fn start() -> TestCluster {
    TestCluster::builder().start().await.expect("start")
}

#[derive(Debug)]
pub struct Resp {
    pub code: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

async fn send_head(
    env: &impl Target,
    method: &str,
    path: &str,
    ct: &str,
    accept: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> BufReader<TcpStream> {
    let host = env.host();
    let mut s = TcpStream::connect(&host).await.expect("connect");
    let extra: String = extra.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: {ct}\r\nAccept: {accept}\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.expect("write");
    s.write_all(body).await.expect("write body");
    BufReader::new(s)
}

async fn read_head(r: &mut BufReader<TcpStream>) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    r.read_line(&mut line).await.expect("status line");
    let code: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("code");
    let mut headers = Vec::new();
    loop {
        let mut l = String::new();
        r.read_line(&mut l).await.expect("header");
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    (code, headers)
}

pub async fn request_full(
    env: &impl Target,
    method: &str,
    path: &str,
    ct: &str,
    accept: &str,
    body: &[u8],
) -> Resp {
    request_with(env, method, path, ct, accept, &[], body).await
}

/// `request_full` with extra request headers.
pub async fn request_with(
    env: &impl Target,
    method: &str,
    path: &str,
    ct: &str,
    accept: &str,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Resp {
    let mut r = send_head(env, method, path, ct, accept, extra, body).await;
    let (code, headers) = read_head(&mut r).await;
    let mut body = Vec::new();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        loop {
            let mut l = String::new();
            r.read_line(&mut l).await.expect("chunk size");
            let n = usize::from_str_radix(l.trim(), 16).expect("hex");
            if n == 0 {
                break;
            }
            let mut buf = vec![0; n + 2];
            r.read_exact(&mut buf).await.expect("chunk");
            body.extend_from_slice(&buf[..n]);
        }
    } else {
        r.read_to_end(&mut body).await.expect("body");
    }
    Resp {
        code,
        headers,
        body,
    }
}

pub async fn req(env: &impl Target, method: &str, path: &str, body: Option<&Value>) -> Resp {
    let b = body
        .map(|b| serde_json::to_vec(b).expect("json"))
        .unwrap_or_default();
    request_full(
        env,
        method,
        path,
        "application/json",
        "application/json",
        &b,
    )
    .await
}

pub async fn patch(env: &impl Target, path: &str, ct: &str, body: &Value) -> Resp {
    let b = serde_json::to_vec(body).expect("json");
    request_full(env, "PATCH", path, ct, "application/json", &b).await
}

/// An open watch stream yielding one JSON line at a time.
pub struct Watch {
    r: BufReader<TcpStream>,
    pub code: u16,
    pub headers: Vec<(String, String)>,
    buf: Vec<u8>,
}

impl Watch {
    pub async fn open(env: &impl Target, path: &str) -> Watch {
        Self::open_accept(env, path, "application/json").await
    }
    pub async fn open_accept(env: &impl Target, path: &str, accept: &str) -> Watch {
        let mut r = send_head(env, "GET", path, "application/json", accept, &[], b"").await;
        let (code, headers) = read_head(&mut r).await;
        Watch {
            r,
            code,
            headers,
            buf: Vec::new(),
        }
    }

    async fn fill(&mut self) -> bool {
        let mut l = String::new();
        if self.r.read_line(&mut l).await.unwrap_or(0) == 0 {
            return false;
        }
        let Ok(n) = usize::from_str_radix(l.trim(), 16) else {
            return false;
        };
        if n == 0 {
            return false;
        }
        let mut buf = vec![0; n + 2];
        if self.r.read_exact(&mut buf).await.is_err() {
            return false;
        }
        self.buf.extend_from_slice(&buf[..n]);
        true
    }

    /// The next raw line (without the newline), or None at end of stream.
    pub async fn next_raw(&mut self) -> Option<String> {
        loop {
            if let Some(i) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Some(String::from_utf8_lossy(&line[..line.len() - 1]).into_owned());
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    pub async fn next(&mut self) -> Option<Value> {
        let l = tokio::time::timeout(Duration::from_secs(20), self.next_raw())
            .await
            .expect("watch event in time")?;
        Some(serde_json::from_str(&l).unwrap_or_else(|e| panic!("bad line {l}: {e}")))
    }
}
