import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that waits on sockets, child processes or other tasks: it catches
    /// a hang, not slowness. It records the hang and cancels the test, but a wait that does not
    /// end on cancellation (a blocking call, a loop that never looks) still holds the whole run:
    /// every such wait needs a deadline of its own, and CI's watchdog (`.ci/swift-test-watched`)
    /// names what it was. In a whole `swift test` run the synchronous tests keep the
    /// cooperative pool's threads (two on a 2-core machine) busy, and an asynchronous test waits
    /// for a free thread at each suspension: one that takes 0.3 s alone takes as long as the whole
    /// run (1–3 minutes measured), so a limit of a minute failed CI although nothing hung.
    public static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
