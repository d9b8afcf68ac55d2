// closure spins in a closure of main, on the main thread (under
// `std::rt::lang_start::<()>::{{closure}}`) and on a spawned one (under
// `<... as core::ops::function::FnOnce<()>>::call_once`), so that perf
// records Rust names whose parentheses are part of the name. The argument
// is the loop length (default 20000000).
use std::hint::black_box;

fn spin(n: u64) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        s = black_box(s.wrapping_add(i * 7));
    }
    s
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000_000);
    let work = move |k: u64| -> u64 { black_box(spin(k)) };
    let t = std::thread::spawn(move || work(n));
    let a = work(n);
    println!("{}", a.wrapping_add(t.join().unwrap()));
}
