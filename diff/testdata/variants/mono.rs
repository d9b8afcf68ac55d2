// One generic function, four monomorphizations: rustc names each
// crunch::h<hash> (legacy mangling), one hash per instance.
use std::hint::black_box;
use std::time::{Duration, Instant};

#[inline(never)]
fn crunch<T: Copy + Into<u64>>(v: &[T]) -> u64 {
    let mut s = 0u64;
    for _ in 0..50 {
        for &x in v {
            s = s.wrapping_mul(31).wrapping_add(x.into());
        }
    }
    s
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0.5);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let (a, b, c, d) = (vec![1u8; 4096], vec![2u16; 4096], vec![3u32; 4096], vec![4u64; 4096]);
    let mut sink = 0u64;
    while Instant::now() < end {
        sink ^= crunch(black_box(&a)) ^ crunch(black_box(&b)) ^ crunch(black_box(&c)) ^ crunch(black_box(&d));
    }
    black_box(sink);
}
