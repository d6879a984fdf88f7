//! Virtual time (`HSASIM_TIME=virtual`): `c_tests/vtime/virtual_clock.hip` run threaded and
//! deterministic, with one interpreter worker and several, must print the same virtual
//! times every time (and pass its own checks: durations that follow the work, a query right
//! after a launch that finds the kernel running, two streams that overlap).

mod common;

fn runs_agree(target: &str) {
    let (program, spec) = common::ctest::build_area_program("vtime", "virtual_clock");
    let run = |deterministic: bool, workers: &str| {
        common::ctest::run_in_mode(&program, "virtual_clock", target, deterministic, |cmd| {
            cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
            cmd.env("HSASIM_TIME", "virtual")
                .env("HSASIM_WORKERS", workers);
        })
    };
    let first = run(false, "2");
    assert!(first.contains("virtual_clock: PASSED"), "{first}");
    for (deterministic, workers) in [(false, "1"), (true, "2"), (false, "2")] {
        let again = run(deterministic, workers);
        assert_eq!(
            again, first,
            "virtual times differ (deterministic {deterministic}, {workers} workers)"
        );
    }
}

#[test]
fn virtual_times_are_the_same_in_every_mode_gfx942() {
    runs_agree("gfx942");
}

#[test]
fn virtual_times_are_the_same_in_every_mode_gfx90a() {
    runs_agree("gfx90a");
}
