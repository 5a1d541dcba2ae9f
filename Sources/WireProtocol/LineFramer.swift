#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines (`\n`, with a trailing `\r` stripped), skipping blank lines.
///
/// A line longer than `maxLineBytes` (not counting its `\r\n` or `\n`) is reported once as
/// `.tooLong`, as soon as the framer has seen more than `maxLineBytes + 1` of its bytes (or at its
/// end); its bytes are dropped up to the next `\n`, so the framer never holds more than
/// `maxLineBytes + 1` bytes. Lines of spaces and tabs only are skipped like empty ones.
public struct LineFramer: Sendable {
    /// What the framer found: a complete line, or a line over the limit with its first bytes (up
    /// to `tooLongPrefixBytes`, enough to read a request id). Both are valid only during the callback.
    public enum Event {
        case line(UnsafeRawBufferPointer)
        case tooLong(prefix: UnsafeRawBufferPointer)
    }

    /// How many leading bytes of a too-long line `Event.tooLong` carries.
    public static let tooLongPrefixBytes = 4096

    /// A copied `Event`, for the collecting `feed(_:)` and `finish()`.
    public enum Output: Hashable, Sendable {
        case line([UInt8])
        case tooLong
    }

    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public static let defaultMaxLineBytes = 1 << 20

    public init(maxLineBytes: Int = LineFramer.defaultMaxLineBytes) {
        precondition(maxLineBytes > 0, "maxLineBytes must be positive")
        self.maxLineBytes = maxLineBytes
    }

    /// The bytes of an unfinished line held so far.
    public var bufferedByteCount: Int { pending.count }

    /// Feeds one chunk and calls `handle` for every line (or too-long line) it completes, in order.
    /// When `handle` throws, the rest of the chunk is dropped.
    public mutating func feed<E: Error>(_ chunk: UnsafeRawBufferPointer, _ handle: (Event) throws(E) -> Void) throws(E) {
        // One more byte than the limit may be held: a `\r` that turns out to end the line.
        let bufferLimit = maxLineBytes + 1
        let count = chunk.count
        var start = 0
        while start < count {
            guard let newline = Self.firstNewline(in: chunk, from: start) else {
                let rest = count - start
                if !discarding {
                    if pending.count + rest > bufferLimit {
                        discarding = true
                        let prefix = prefix(of: UnsafeRawBufferPointer(rebasing: chunk[start..<count]))
                        releasePending()
                        try Self.reportTooLong(prefix, handle)
                    } else {
                        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<count]))
                    }
                }
                return
            }
            if discarding {
                discarding = false
            } else if pending.isEmpty {
                let line = UnsafeRawBufferPointer(rebasing: chunk[start..<newline])
                if Self.length(of: line) > maxLineBytes {
                    try handle(.tooLong(prefix: UnsafeRawBufferPointer(rebasing: line.prefix(Self.tooLongPrefixBytes))))
                } else {
                    try Self.deliver(line, handle)
                }
            } else if pending.count + (newline - start) > bufferLimit {
                let prefix = prefix(of: UnsafeRawBufferPointer(rebasing: chunk[start..<newline]))
                releasePending()
                try Self.reportTooLong(prefix, handle)
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<newline]))
                let line = pending
                releasePending()
                if line.withUnsafeBytes({ Self.length(of: $0) }) > maxLineBytes {
                    try Self.reportTooLong(Array(line.prefix(Self.tooLongPrefixBytes)), handle)
                } else {
                    try Self.deliver(line, handle)
                }
            }
            start = newline + 1
        }
    }

    /// Ends the input: delivers a last line that had no `\n`, and resets the framer.
    public mutating func finish<E: Error>(_ handle: (Event) throws(E) -> Void) throws(E) {
        let line = pending
        let wasDiscarding = discarding
        releasePending()
        discarding = false
        guard !wasDiscarding, !line.isEmpty else { return }
        if line.withUnsafeBytes({ Self.length(of: $0) }) > maxLineBytes {
            try Self.reportTooLong(Array(line.prefix(Self.tooLongPrefixBytes)), handle)
        } else {
            try Self.deliver(line, handle)
        }
    }

    /// Feeds one chunk and returns copies of the lines it completes.
    public mutating func feed(_ chunk: some Sequence<UInt8>) -> [Output] {
        let bytes = Array(chunk)
        var outputs: [Output] = []
        bytes.withUnsafeBytes { raw in feed(raw) { outputs.append(Output($0)) } }
        return outputs
    }

    /// Ends the input and returns the last line, if any.
    public mutating func finish() -> [Output] {
        var outputs: [Output] = []
        finish { outputs.append(Output($0)) }
        return outputs
    }

    /// The first bytes of the current line: what is pending, then `tail`.
    private func prefix(of tail: UnsafeRawBufferPointer) -> [UInt8] {
        var bytes = Array(pending.prefix(Self.tooLongPrefixBytes))
        bytes.append(contentsOf: tail.prefix(Self.tooLongPrefixBytes - bytes.count))
        return bytes
    }

    private static func reportTooLong<E: Error>(_ prefix: [UInt8], _ handle: (Event) throws(E) -> Void) throws(E) {
        let result = prefix.withUnsafeBytes { bytes in
            Result { () throws(E) in try handle(.tooLong(prefix: bytes)) }
        }
        try result.get()
    }

    private mutating func releasePending() {
        if pending.capacity > 1 << 16 {
            pending = []
        } else {
            pending.removeAll(keepingCapacity: true)
        }
    }

    private static func deliver<E: Error>(_ line: [UInt8], _ handle: (Event) throws(E) -> Void) throws(E) {
        let result = line.withUnsafeBytes { bytes in
            Result { () throws(E) in try deliver(bytes, handle) }
        }
        try result.get()
    }

    private static func deliver<E: Error>(_ line: UnsafeRawBufferPointer, _ handle: (Event) throws(E) -> Void) throws(E) {
        var end = line.count
        if end > 0, line[end - 1] == 0x0D { end -= 1 }
        var index = 0
        while index < end, line[index] == 0x20 || line[index] == 0x09 || line[index] == 0x0D { index += 1 }
        guard index < end else { return }
        try handle(.line(UnsafeRawBufferPointer(rebasing: line[0..<end])))
    }

    /// The length of a line without its trailing `\r`.
    private static func length(of line: UnsafeRawBufferPointer) -> Int {
        line.last == 0x0D ? line.count - 1 : line.count
    }

    private static func firstNewline(in chunk: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < chunk.count, let base = chunk.baseAddress,
              let found = memchr(base + start, 0x0A, chunk.count - start)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}

extension LineFramer.Output {
    init(_ event: LineFramer.Event) {
        switch event {
        case .line(let bytes): self = .line(Array(bytes))
        case .tooLong: self = .tooLong
        }
    }
}
