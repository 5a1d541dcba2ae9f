import Synchronization

/// An in-process session's output: the engine's lines in order, as an `AsyncStream`, with the
/// unread bytes counted, so that the engine holds the session's requests while its reader is more
/// than `limitBytes` behind (`EngineOutput.isBackedUp`), instead of growing memory without bound.
final class LineOutput: EngineOutput, @unchecked Sendable {
    /// The lines for the reader, each without its `\n`.
    let lines: AsyncStream<[UInt8]>
    private let buffer: LineBuffer
    /// Queued by the engine thread, not yet split into lines (engine thread only).
    private var pending: [UInt8] = []

    init(limitBytes: Int) {
        let buffer = LineBuffer(limitBytes: limitBytes)
        self.buffer = buffer
        lines = AsyncStream(unfolding: { await buffer.next() })
    }

    func enqueue(_ bytes: [UInt8]) {
        pending.append(contentsOf: bytes)
    }

    @discardableResult
    func flush() -> Bool {
        guard !pending.isEmpty else { return !buffer.isGone }
        var lines: [[UInt8]] = []
        var start = 0
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            lines.append(Array(pending[start..<newline]))
            start = newline + 1
        }
        pending.removeFirst(start)
        buffer.append(lines)
        return !buffer.isGone
    }

    var isPeerGone: Bool { buffer.isGone }

    var isBackedUp: Bool { buffer.unreadBytes + pending.count > buffer.limitBytes }

    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool {
        flush()  // the reader can drain only what was delivered
        return buffer.notifyWhenDrained(drained)
    }

    func finish() {
        flush()
        buffer.finish()
    }

    /// Bytes of lines delivered to the stream and not yet read.
    var unreadBytes: Int { buffer.unreadBytes }
}

/// The lines between the engine thread and the reader's task.
private final class LineBuffer: Sendable {
    let limitBytes: Int
    fileprivate struct State {
        var lines: [[UInt8]] = []
        var head = 0
        var unreadBytes = 0
        var waiter: CheckedContinuation<[UInt8]?, Never>?
        var finished = false
        var gone = false
        var drained: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    init(limitBytes: Int) {
        self.limitBytes = limitBytes
    }

    var unreadBytes: Int { state.withLock { $0.unreadBytes } }
    var isGone: Bool { state.withLock { $0.gone } }

    // Every continuation is resumed after the lock is released: resuming takes the waiting
    // task's status lock, which a cancellation of that task holds while its handler (`next()`'s
    // `onCancel`) waits for this lock. Resuming under the lock deadlocked the engine thread
    // against a gateway connection cancelling its writer (a daemon that never exited).

    func append(_ lines: [[UInt8]]) {
        guard !lines.isEmpty else { return }
        let (waiter, first) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?) in
            guard !state.gone else { return (nil, nil) }
            var lines = lines[...]
            var handed: (CheckedContinuation<[UInt8]?, Never>?, [UInt8]?) = (nil, nil)
            if let waiter = state.waiter {
                state.waiter = nil
                handed = (waiter, lines.removeFirst())
            }
            for line in lines { state.unreadBytes += line.count + 1 }
            state.lines.append(contentsOf: lines)
            return handed
        }
        waiter?.resume(returning: first)
    }

    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    func notifyWhenDrained(_ drained: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.unreadBytes > limitBytes, !state.gone else { return false }
            state.drained = drained
            return true
        }
    }

    /// The next line, waiting for one; nil once the engine finished the session and every line
    /// was read, or when the reading task is cancelled (the reader is then gone).
    func next() async -> [UInt8]? {
        await withTaskCancellationHandler {
            let (line, drained) = state.withLock { $0.pop(limitBytes: limitBytes) }
            drained?()
            if let line { return line }
            return await withCheckedContinuation { (waiter: CheckedContinuation<[UInt8]?, Never>) in
                let (ready, line, drained) = state.withLock { state -> (Bool, [UInt8]?, (@Sendable () -> Void)?) in
                    let (line, drained) = state.pop(limitBytes: limitBytes)
                    if line != nil || state.finished || state.gone {
                        return (true, line, drained)  // a line arrived in between, or the end
                    }
                    state.waiter = waiter
                    return (false, nil, drained)
                }
                if ready { waiter.resume(returning: line) }
                drained?()
            }
        } onCancel: {
            let (waiter, drained) = state.withLock { state -> (CheckedContinuation<[UInt8]?, Never>?, (@Sendable () -> Void)?) in
                state.gone = true
                state.lines.removeAll()
                state.head = 0
                state.unreadBytes = 0
                defer { state.waiter = nil; state.drained = nil }
                return (state.waiter, state.drained)
            }
            waiter?.resume(returning: nil)
            drained?()
        }
    }
}

extension LineBuffer.State {
    /// Takes the oldest unread line, and the drain callback to call when that brought the unread
    /// bytes back within `limitBytes`.
    fileprivate mutating func pop(limitBytes: Int) -> ([UInt8]?, (@Sendable () -> Void)?) {
        guard head < lines.count else { return (nil, nil) }
        let line = lines[head]
        head += 1
        if head == lines.count {
            lines.removeAll(keepingCapacity: lines.count < 4096)
            head = 0
        } else if head >= 4096 && head * 2 >= lines.count {
            lines.removeFirst(head)
            head = 0
        }
        unreadBytes -= line.count + 1
        guard unreadBytes <= limitBytes, let drained else { return (line, nil) }
        self.drained = nil
        return (line, drained)
    }
}
