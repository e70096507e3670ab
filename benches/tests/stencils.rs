//! The bench stencils compute what a straightforward loop with checked indexing does,
//! bit for bit, on a periodic MultiFab with several boxes and tiles.

use amrex_benches::{MultiFabCase, VarCoefCase, div_beta_grad, laplacian};
use amrex_multifab::{IntVect, Periodicity, Tiling};

/// `div(beta grad phi)` written out: x, y, then z faces, high face minus low face, with
/// `beta` averaged onto each face.
#[test]
fn div_beta_grad_matches_reference_loop() {
    let VarCoefCase { phi, beta, mut out } = VarCoefCase::new(32);
    for tiling in [Tiling::Default, Tiling::Size(IntVect::new(16, 4, 2))] {
        out.fill(f64::NAN).unwrap();
        div_beta_grad(&mut out, &phi, &beta, tiling);
        for mfi in out.mfiter(Tiling::None) {
            let (p, b, o) = (phi.array(&mfi), beta.array(&mfi), out.array(&mfi));
            for n in 0..2 {
                for c in mfi.validbox().iter() {
                    let flux = |e: IntVect| {
                        let bp = 0.5 * (b[(c, 0)] + b[(c + e, 0)]);
                        let bm = 0.5 * (b[(c, 0)] + b[(c - e, 0)]);
                        bp * (p[(c + e, n)] - p[(c, n)]) - bm * (p[(c, n)] - p[(c - e, n)])
                    };
                    let want = (flux(IntVect::new(1, 0, 0)) + flux(IntVect::new(0, 1, 0)))
                        + flux(IntVect::new(0, 0, 1));
                    assert_eq!(
                        o[(c, n)].to_bits(),
                        want.to_bits(),
                        "cell {c:?}, component {n}"
                    );
                }
            }
        }
    }
}

/// The bench Laplacian against the 7-point formula with checked indexing, on a phi with
/// varying values (the bench's own input is constant).
#[test]
fn laplacian_matches_reference_loop() {
    let MultiFabCase {
        domain,
        mut phi,
        mut lap,
        ..
    } = MultiFabCase::new(32);
    phi.par_for_each_tile(Tiling::Default, IntVect::ZERO, |mut t| {
        let bx = t.region();
        t.array_mut().for_each_mut(bx, |i, j, k, _, v| {
            *v = f64::from((i * 7 + j * j * 3 + k * k * k) % 101) * 0.125;
        });
    });
    phi.fill_boundary(Periodicity::all(domain)).unwrap();
    laplacian(&mut lap, &phi, Tiling::Default);
    for mfi in lap.mfiter(Tiling::None) {
        let (p, o) = (phi.array(&mfi), lap.array(&mfi));
        for c in mfi.validbox().iter() {
            let at = |d: [i32; 3]| p[(c + IntVect::from(d), 0)];
            let want = (at([-1, 0, 0]) + at([1, 0, 0]))
                + (at([0, -1, 0]) + at([0, 1, 0]))
                + (at([0, 0, -1]) + at([0, 0, 1]))
                - 6.0 * at([0, 0, 0]);
            assert_eq!(o[(c, 0)].to_bits(), want.to_bits(), "cell {c:?}");
        }
    }
}
