//! A bare JSON-RPC client for bench/mcp: starts a stdio MCP server, does the
//! handshake, calls one tool N times sequentially and prints the round-trip
//! times as JSON. No MCP SDK, no async runtime, little parsing: what it
//! measures is the server's cost plus a pipe round trip.
//!
//! `bare_client CALLS WARMUP TOOL -- COMMAND [ARGS...]`
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a measuring tool: fail loudly, print the figures"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

#[expect(clippy::disallowed_methods, reason = "the server under measure")]
fn command(program: &str) -> Command {
    Command::new(program)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let calls: usize = args[1].parse().unwrap();
    let warmup: usize = args[2].parse().unwrap();
    let tool = &args[3];
    let rest = &args[5..];
    let started = Instant::now();
    let mut child = command(&rest[0])
        .args(&rest[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut round_trip = |stdin: &mut std::process::ChildStdin, message: &str, id: u64| {
        stdin.write_all(message.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let needle = format!("\"id\":{id},");
        let needle_end = format!("\"id\":{id}}}");
        loop {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "server closed");
            if line.contains(&needle) || line.contains(&needle_end) {
                assert!(!line.contains("\"error\":{"), "{line}");
                return;
            }
        }
    };
    round_trip(
        &mut stdin,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bare\",\"version\":\"1\"}}}\n",
        0,
    );
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    let call = |id: u64| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{{}}}}}}\n"
        )
    };
    round_trip(&mut stdin, &call(1), 1);
    let startup = started.elapsed();
    let mut id = 1;
    for _ in 0..warmup {
        id += 1;
        round_trip(&mut stdin, &call(id), id);
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        id += 1;
        let message = call(id);
        let t = Instant::now();
        round_trip(&mut stdin, &message, id);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let pick = |percent: usize| sorted[(percent * (sorted.len() - 1) + 50) / 100];
    let mean = times.iter().sum::<f64>() / f64::from(u32::try_from(times.len()).unwrap());
    println!(
        "{{\"startup_ms\":{:.3},\"p50_ms\":{:.4},\"p99_ms\":{:.4},\"mean_ms\":{:.4},\"calls\":{calls}}}",
        startup.as_secs_f64() * 1e3,
        pick(50),
        pick(99),
        mean
    );
}
