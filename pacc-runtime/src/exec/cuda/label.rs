//! How an operation is named in traces, fault messages and the report's stage times.

use crate::plan::{HostSide, OpKind};
use crate::program::Program;

/// The stage an operation's time counts toward (`"htod"`, `"kernel"`, ...) and its trace name.
pub(super) fn op_label(program: &Program, k: &OpKind) -> (&'static str, String) {
    let an = |a: &usize| {
        program
            .arrays
            .get(*a)
            .map(|d| d.name.as_str())
            .unwrap_or("?")
    };
    match k {
        OpKind::HtoD {
            array,
            set,
            planes,
            from,
            ..
        } => (
            "htod",
            format!(
                "HtoD {} s{set} {planes:?}{}",
                an(array),
                match from {
                    HostSide::Staging => " (staging)",
                    HostSide::Compressed => " (compressed)",
                    HostSide::User => "",
                }
            ),
        ),
        OpKind::DtoH {
            array,
            set,
            planes,
            to,
            ..
        } => (
            "dtoh",
            format!(
                "DtoH {} s{set} {planes:?}{}",
                an(array),
                match to {
                    HostSide::Staging => " (staging)",
                    HostSide::Compressed => " (compressed)",
                    HostSide::User => "",
                }
            ),
        ),
        OpKind::StageIn {
            array, set, planes, ..
        } => (
            "host_copy",
            format!("StageIn {} s{set} {planes:?}", an(array)),
        ),
        OpKind::StageOut {
            array, set, planes, ..
        } => (
            "host_copy",
            format!("StageOut {} s{set} {planes:?}", an(array)),
        ),
        OpKind::Encode {
            array, set, planes, ..
        } => ("encode", format!("Encode {} s{set} {planes:?}", an(array))),
        OpKind::Decode {
            array, set, planes, ..
        } => ("decode", format!("Decode {} s{set} {planes:?}", an(array))),
        OpKind::DtoD {
            array,
            from_set,
            to_set,
            planes,
            ..
        } => (
            "dtod",
            format!("DtoD {} s{from_set}->s{to_set} {planes:?}", an(array)),
        ),
        OpKind::Kernel {
            kernel,
            set,
            step,
            planes,
            ..
        } => (
            "kernel",
            format!(
                "{} s{set} t{step} {planes:?}",
                program
                    .kernels
                    .get(*kernel)
                    .map(|k| k.name.as_str())
                    .unwrap_or("?")
            ),
        ),
        OpKind::Point {
            point,
            set,
            step,
            plane,
            ..
        } => (
            "kernel",
            format!(
                "{} s{set} t{step} @{plane}",
                program
                    .points
                    .get(*point)
                    .map(|p| p.name.as_str())
                    .unwrap_or("?")
            ),
        ),
    }
}
