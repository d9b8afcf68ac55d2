// Built by symbolize's demangle tests (rustc -C symbol-mangling-version=legacy
// and =v0): a module, a generic type with a method, a trait impl, a closure and
// a function generic over a tuple struct's constructor, each kept out of line
// so that nm lists it. With DEMANGLE_BACKTRACE set, `apply` prints Rust's own
// backtrace (std demangles with rustc-demangle) to compare names with.
mod shapes {
    pub struct Thing<T>(pub T);

    impl<T: Copy + Into<u64>> Thing<T> {
        #[inline(never)]
        pub fn double(&self) -> u64 {
            self.0.into() * 2
        }
    }

    pub trait Area {
        fn area(&self) -> u64;
    }

    impl Area for Thing<u32> {
        #[inline(never)]
        fn area(&self) -> u64 {
            u64::from(self.0) * 3
        }
    }
}

use shapes::Area;

// Instantiated with the constructor `shapes::Thing`, whose v0 path segment
// (namespace `c`) has no name.
#[inline(never)]
fn apply<F: Fn(u64) -> shapes::Thing<u64>>(f: F, n: u64) -> u64 {
    if std::env::var_os("DEMANGLE_BACKTRACE").is_some() {
        println!("{}", std::backtrace::Backtrace::force_capture());
    }
    f(n).0
}

#[inline(never)]
fn compute(n: u64) -> u64 {
    let f = |k: u64| k + n;
    std::hint::black_box(f)(n)
}

fn main() {
    let a = shapes::Thing(7u32);
    let b = shapes::Thing(9u64);
    let n = std::env::args().count() as u64;
    let mut r = compute(n) + a.double() + b.double() + a.area() + apply(shapes::Thing, n);
    // With an argument it runs for a while, for perf record to sample.
    for i in 0..if n > 1 { 8_000_000u64 } else { 0 } {
        r = r.wrapping_add(compute(i) + shapes::Thing(i).double() + shapes::Thing(i as u32).area());
    }
    println!("{}", r);
}
