//! `ParmParse` over inputs text made of fuzzer bytes, then what a program does with it:
//! every key read as each value type, the AMR parameters (`amr.*`, `geometry.*`) read into
//! an `AmrInfo`, a `Geometry` and an `AmrMesh` (whose checks refuse what AMReX refuses),
//! and the report of unused keys. Anything but a clean error or a value is a finding: a
//! panic, a hang, an allocation the text does not justify (a `max_level` of 2^31, say).
#![no_main]

use amrex_amr::{AmrInfo, AmrMesh, geometry_from_parm_parse};
use amrex_runtime::ParmParse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(pp) = ParmParse::from_text(text, "fuzz") else {
        return;
    };
    let keys: Vec<String> = pp.keys().into_iter().map(str::to_owned).collect();
    for k in &keys {
        let _ = pp.query::<i32>(k);
        let _ = pp.query::<f64>(k);
        let _ = pp.query::<bool>(k);
        let _ = pp.query_arr::<i64>(k);
        let _ = pp.query_arr::<String>(k);
        let _ = pp.query_arr_n::<f64>(k, 3);
        let _ = pp.count_values(k);
    }
    let _ = pp.unused_report();
    let _ = AmrInfo::from_parm_parse(&pp);
    let _ = geometry_from_parm_parse(&pp);
    let _ = AmrMesh::from_parm_parse(&pp);
});
