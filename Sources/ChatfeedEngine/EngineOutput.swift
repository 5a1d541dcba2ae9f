/// Where the engine writes one session's lines: stdout for the daemon, an async sequence
/// in-process (`InProcessSession.lines`), a socket for a gateway.
///
/// Called by the engine one call at a time: on its thread, or on the thread of a group's feed
/// work while the engine thread waits for it (docs/DECISIONS.md, "A group's feed work beside the
/// next group's statements"), never on both at once.
public protocol EngineOutput: AnyObject {
    /// Queues bytes (whole lines, each ending in `\n`) for the next `flush()`.
    func enqueue(_ bytes: [UInt8])
    /// Delivers what is queued; false once the reader is gone.
    @discardableResult func flush() -> Bool
    /// True when the reader is gone, found without writing.
    var isPeerGone: Bool { get }
    /// True while the reader has more unread output than the session may hold: the engine then
    /// holds the session's requests (other sessions go on). A cheap look, read often.
    var isBackedUp: Bool { get }
    /// Registers `drained`, to be called once (on any thread) when the unread output falls back
    /// within the bound, and returns true; returns false, without registering, when it already has.
    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool
    /// The session ended: what is queued is flushed, and no line follows.
    func finish()
}

extension EngineOutput {
    /// An output that never backs up: `flush()` itself waits for the reader (stdout).
    public var isBackedUp: Bool { false }
    public func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool { false }
    public func finish() { flush() }
}
