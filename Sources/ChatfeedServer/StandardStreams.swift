import Foundation

/// Reads a file descriptor on a dedicated thread (Linux has no async `FileHandle.bytes`) and
/// hands the chunks to the engine's queue, then `.endOfInput`.
enum InputReader {
    static func start(fileDescriptor: Int32, into queue: InputQueue) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    if !queue.push(.bytes(Array(buffer[0..<count]))) { return }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    queue.push(.endOfInput)
                    return
                }
            }
        }
        thread.name = "chatfeedd.stdin"
        thread.start()
    }
}

/// Writes whole protocol lines to a file descriptor. A closed pipe marks the writer closed
/// instead of killing the process (SIGPIPE is ignored by the daemon). It waits for the reader
/// with `poll` and writes at most a pipe buffer at a time, so that a reader that stops reading
/// can never hold the daemon for more than `shutdownGrace` after a shutdown was requested.
final class OutputWriter {
    private let fileDescriptor: Int32
    private(set) var isClosed = false
    private var pending: [UInt8] = []
    /// When a shutdown was requested (checked while the reader does not read).
    var shutdownRequestedAt: () -> Date? = { nil }
    private let shutdownGrace: TimeInterval = 2

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Queues bytes (whole lines) to be written by the next `flush()`.
    func enqueue(_ bytes: [UInt8]) {
        pending.append(contentsOf: bytes)
    }

    /// Writes everything queued; returns false when the other end is gone (or, once a shutdown
    /// was requested, has not read for `shutdownGrace` seconds since both the request and the
    /// start of the wait).
    @discardableResult
    func flush() -> Bool {
        defer { pending.removeAll(keepingCapacity: pending.count < 1 << 20) }
        guard !isClosed, !pending.isEmpty else { return !isClosed }
        var offset = 0
        var blockedSince: Date?
        while offset < pending.count {
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, 200)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 {
                let since = blockedSince ?? Date()
                blockedSince = since
                if let requested = shutdownRequestedAt(),
                   Date().timeIntervalSince(max(since, requested)) > shutdownGrace { break }
                continue
            }
            guard ready > 0, descriptor.revents & Int16(POLLERR | POLLNVAL) == 0 else { break }
            blockedSince = nil
            let chunk = min(pending.count - offset, Int(PIPE_BUF))
            let written = pending.withUnsafeBytes { bytes in
                write(fileDescriptor, bytes.baseAddress! + offset, chunk)
            }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                break
            }
        }
        if offset < pending.count { isClosed = true }
        return !isClosed
    }

    /// True when the reading end is closed, found without writing (POLLERR on a pipe whose
    /// reader is gone), so that an idle daemon notices a closed stdout too.
    var isPeerGone: Bool {
        var descriptor = pollfd(fd: fileDescriptor, events: 0, revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
    }
}
