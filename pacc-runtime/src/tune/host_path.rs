//! Registering the caller's arrays against bouncing through pacc's pinned rings: which costs
//! the call less, from the rates the model knows.
//!
//! Registering costs the driver's time on every byte of the arrays not locked yet, once per
//! call, and as much again to unregister before the call returns (89.4 GiB took 1.67 s on an
//! H200). Bouncing costs a host copy of every byte that crosses the link, which hides behind
//! the link while the host copies at least as fast. So a call that moves its arrays once or
//! twice bounces, and one that streams them through the GPU many times on a host that copies
//! slowly registers once.

use super::model::Rates;
use crate::options::HostPath;

/// Unregistering rate assumed (bytes per second): 89.4 GiB in 1.67 s on an H200's host,
/// 2026-11-28 (`benches/results/2026-11-28-h200-oneshot/`).
pub const UNREGISTER_RATE: f64 = 57e9;

/// The share of the host's measured copy rate that bounced copies reach. Each bounced byte is
/// copied by the host and then read or written by the DMA engine in the same memory, and the
/// uploads' and downloads' copies take turns on the driver's thread: on an H200 host
/// (2026-11-28) a one-shot call bounced 160 GB at 33 GB/s with copies measured at 51 GB/s, and
/// a 144-step run 373 GB at 43 GB/s with copies measured at 65-79 GB/s
/// (`benches/results/2026-11-28-h200x2-relay-bounce/`).
pub const BOUNCE_COPY_SHARE: f64 = 0.5;

/// What a call moves between the caller's arrays and the device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostTraffic {
    /// Bytes of the arrays not page-locked yet.
    pub unlocked: u64,
    /// Bytes copied from the arrays to the device, and back, over the whole call.
    pub htod: u64,
    pub dtoh: u64,
}

/// The path a call takes, with the prices behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostPathChoice {
    pub path: HostPath,
    /// Seconds registering and unregistering would cost (0 where nothing was priced: a path
    /// the options name, or arrays page-locked already).
    pub register_seconds: f64,
    /// Seconds of host copies the link would not hide (0 where nothing was priced).
    pub bounce_seconds: f64,
    /// The report's sentence.
    pub why: String,
}

/// Register or bounce: `wanted` unless it is [`HostPath::Auto`], else the cheaper by the
/// prices of `price` (below). `rates` is asked for only when there is something to price, since
/// measuring the host's copy rate costs time a call that needs no choice should not pay.
pub fn choose(wanted: HostPath, t: HostTraffic, rates: impl FnOnce() -> Rates) -> HostPathChoice {
    let unpriced = |path, why: &str| HostPathChoice {
        path,
        register_seconds: 0.0,
        bounce_seconds: 0.0,
        why: why.to_string(),
    };
    match wanted {
        HostPath::Auto if t.unlocked == 0 => {
            unpriced(HostPath::Register, "the arrays are page-locked already")
        }
        HostPath::Auto => {
            let (register_seconds, bounce_seconds, why) = price(t, &rates());
            let path = match bounce_seconds < register_seconds {
                true => HostPath::Bounce,
                false => HostPath::Register,
            };
            HostPathChoice {
                path,
                register_seconds,
                bounce_seconds,
                why,
            }
        }
        w => unpriced(w, "as the options ask (PACC_HOST_PATH)"),
    }
}

/// Seconds registering (and unregistering) would cost, seconds of host copies the link would
/// not hide when bouncing, and the sentence that gives both.
fn price(t: HostTraffic, rates: &Rates) -> (f64, f64, String) {
    let gb = |b: u64| b as f64 / 1e9;
    let register_seconds =
        t.unlocked as f64 / rates.register_rate + t.unlocked as f64 / UNREGISTER_RATE;
    let copies = (t.htod + t.dtoh) as f64 / (rates.host_copy_rate * BOUNCE_COPY_SHARE);
    let bounce_seconds = (copies - rates.link.seconds(t.htod, t.dtoh)).max(0.0);
    let why = format!(
        "registering {:.1} GB costs about {register_seconds:.2} s; bouncing {:.1} GB through \
         pinned rings, {bounce_seconds:.2} s the link does not hide (host copies measured at \
         {:.0} GB/s, bounced at about {:.0})",
        gb(t.unlocked),
        gb(t.htod + t.dtoh),
        rates.host_copy_rate / 1e9,
        rates.host_copy_rate * BOUNCE_COPY_SHARE / 1e9
    );
    (register_seconds, bounce_seconds, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::model::LinkRates;

    fn rates(host_copy: f64) -> Rates {
        let link = LinkRates {
            bytes: 1 << 28,
            ..LinkRates::H100
        };
        let mut r = Rates::new(link, vec![1e11]);
        r.host_copy_rate = host_copy;
        r
    }

    fn traffic(gb: u64, passes: u64) -> HostTraffic {
        HostTraffic {
            unlocked: gb * 1_000_000_000,
            htod: passes * gb * 1_000_000_000,
            dtoh: passes * gb * 1_000_000_000,
        }
    }

    #[test]
    fn a_one_shot_call_bounces_and_many_passes_register() {
        // 96 GB once in, once out, host copies at 64 GB/s (bounced at 32): 6.0 s of copies
        // against 2.26 s of link, 3.74 s exposed, against 6.48 s to register and unregister.
        let c = choose(HostPath::Auto, traffic(96, 1), || rates(64e9));
        assert_eq!(c.path, HostPath::Bounce, "{}", c.why);
        assert!((c.bounce_seconds - 3.74).abs() < 0.05, "{c:?}");
        assert!((c.register_seconds - 6.48).abs() < 0.05, "{c:?}");
        // 27.6 GB streamed through the GPU about four and a half times each way (a 144-step
        // out-of-core run), copies at 70 GB/s: registering once is cheaper.
        let streamed = HostTraffic {
            unlocked: 27_600_000_000,
            htod: 248_800_000_000,
            dtoh: 124_400_000_000,
        };
        let c = choose(HostPath::Auto, streamed, || rates(70e9));
        assert_eq!(c.path, HostPath::Register, "{}", c.why);
        // A host that copies twice as fast as the link both ways hides every copy.
        let c = choose(HostPath::Auto, traffic(93, 3), || rates(200e9));
        assert_eq!((c.path, c.bounce_seconds), (HostPath::Bounce, 0.0));
    }

    #[test]
    fn locked_arrays_and_explicit_choices_are_kept() {
        let mut t = traffic(10, 1);
        t.unlocked = 0;
        // Nothing to price: the rates are not even asked for.
        let c = choose(HostPath::Auto, t, || panic!("priced locked arrays"));
        assert_eq!(c.path, HostPath::Register);
        assert!(c.why.contains("page-locked already"));
        let c = choose(HostPath::Bounce, traffic(93, 3), || {
            panic!("priced a named path")
        });
        assert_eq!(c.path, HostPath::Bounce);
        let c = choose(HostPath::Register, traffic(1, 1), || {
            panic!("priced a named path")
        });
        assert_eq!(c.path, HostPath::Register);
    }
}
