import ChatfeedEngine
import Foundation
import NamedThreads

/// Reads a file descriptor on a dedicated thread (Linux has no async `FileHandle.bytes`) and
/// hands the chunks to the engine's session, then closes the session at end of file.
enum InputReader {
    static func start(fileDescriptor: Int32, into session: EngineSession) {
        Thread.start(named: "chatfeedd.in") {
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    if !session.send(Array(buffer[0..<count])) { return }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    session.close()
                    return
                }
            }
        }
    }
}

/// Writes whole protocol lines to a file descriptor, and never a line in part: when stdout is a
/// pipe (as it is for a client that spawns the daemon), a line is written only once the pipe has
/// room for all of it, so that a reader that stops reading, followed by a signal that ends the
/// daemon, leaves only whole lines in the pipe. The pipe is grown to 1 MiB where the system allows
/// it (`/proc/sys/fs/pipe-max-size`), so every line up to that size is whole; a longer line (a
/// snapshot of thousands of chats) starts only when the pipe is empty and goes in parts. When the
/// daemon has to end in the middle of such a line, the rest of it goes to a `cat` child that
/// inherits stdout: the daemon exits, and the reader still finds the line whole when it reads on.
///
/// A closed pipe marks the writer closed instead of killing the process (SIGPIPE is ignored by
/// the daemon). A reader that stops reading can never hold the daemon for more than
/// `shutdownGrace` after a shutdown was requested.
final class OutputWriter: EngineOutput {
    private let fileDescriptor: Int32
    private(set) var isClosed = false
    private var pending: [UInt8] = []
    /// When a shutdown was requested (checked while the reader does not read).
    var shutdownRequestedAt: () -> Date? = { nil }
    private let shutdownGrace: TimeInterval = 2
    /// The pipe's capacity in bytes; nil when the descriptor is not a pipe.
    let pipeCapacity: Int?
    private static let pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))
    /// This writer's writes that may still be in the pipe, oldest first, with the most pipe pages
    /// each can occupy (the kernel gives every write fresh pages, merging only a short tail).
    private var writesInPipe: [(bytes: Int, pages: Int)] = []

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        pipeCapacity = Self.growPipe(fileDescriptor)
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
        var lastUnread = Int.max
        while offset < pending.count {
            let (chunk, unread) = writableBytes(from: offset)
            if unread < lastUnread { blockedSince = nil }  // the reader reads: not stalled
            lastUnread = unread
            if chunk == 0 {
                var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&descriptor, 1, 200)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 || descriptor.revents & Int16(POLLERR | POLLNVAL) != 0 { break }
                // The pipe has room, not yet for the whole line: let the reader catch up.
                if ready > 0 { usleep(2_000) }
                let since = blockedSince ?? Date()
                blockedSince = since
                if let requested = shutdownRequestedAt(),
                   Date().timeIntervalSince(max(since, requested)) > shutdownGrace {
                    let atLineStart = offset == 0 || pending[offset - 1] == 0x0A
                    if !atLineStart {
                        let end = lineEnd(from: offset)
                        if pending.withUnsafeBytes({ handOver(UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }) {
                            offset = end
                        }
                    }
                    break
                }
                continue
            }
            let written = pending.withUnsafeBytes { bytes in
                write(fileDescriptor, bytes.baseAddress! + offset, chunk)
            }
            if written > 0 {
                offset += written
                blockedSince = nil
                if pipeCapacity != nil { writesInPipe.append((written, (written + Self.pageSize - 1) / Self.pageSize)) }
            } else if written < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                break
            }
        }
        if offset < pending.count { isClosed = true }
        return !isClosed
    }

    /// How many bytes from `offset` can be written now without blocking and without leaving a
    /// line in part, and the bytes the reader has not read yet (0 when not a pipe).
    private func writableBytes(from offset: Int) -> (chunk: Int, unread: Int) {
        guard let capacity = pipeCapacity else {
            // Not a pipe (a file, a terminal): writes do not stall for long; poll decides.
            var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLOUT) != 0
            return (ready ? min(pending.count - offset, Int(PIPE_BUF)) : 0, 0)
        }
        var unreadBytes: Int32 = 0
        guard ioctl(fileDescriptor, UInt(FIONREAD), &unreadBytes) == 0 else { return (0, 0) }
        let unread = Int(unreadBytes)
        let room = max(0, capacity - pagesInUse(unread: unread) * Self.pageSize)
        let atLineStart = offset == 0 || pending[offset - 1] == 0x0A
        if !atLineStart {
            return (min(room, lineEnd(from: offset) - offset), unread)
        }
        // Whole lines that fit in the room.
        var end = offset
        while end < pending.count {
            let next = lineEnd(from: end)
            if next - offset > room { break }
            end = next
        }
        if end > offset { return (end - offset, unread) }
        // A line longer than the pipe can ever hold goes in parts, started on an empty pipe.
        let longest = capacity - 2 * Self.pageSize
        if lineEnd(from: offset) - offset > longest && unread == 0 { return (room, unread) }
        return (0, unread)
    }

    /// Starts `cat` with `rest` (the end of a line already partly in the pipe) as its input and
    /// this writer's descriptor as its output, and does not wait for it: it writes the rest when
    /// the reader reads on, and ends then or when the reader closes the pipe (EPIPE). Returns
    /// false when it could not be started (the line then stays cut).
    private func handOver(_ rest: UnsafeRawBufferPointer) -> Bool {
        #if os(Linux)
        guard let path = ["/bin/cat", "/usr/bin/cat"].first(where: { (candidate: String) in access(candidate, X_OK) == 0 }),
              let file = tmpfile() else { return false }
        defer { fclose(file) }
        let input = fileno(file)
        var offset = 0
        while offset < rest.count {
            let written = write(input, rest.baseAddress! + offset, rest.count - offset)
            if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return false }
        }
        guard lseek(input, 0, SEEK_SET) == 0 else { return false }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input, 0)
        if fileDescriptor != 1 { posix_spawn_file_actions_adddup2(&actions, fileDescriptor, 1) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // SIGPIPE is ignored here; the child takes the default, and ends when the reader is gone.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("cat"), nil]
        defer { arguments.forEach { free($0) } }
        return posix_spawn(&child, path, &actions, &attributes, arguments, environ) == 0
        #else
        return false
        #endif
    }

    /// The most pipe pages `unread` bytes occupy: the pages of the latest writes that hold them
    /// (a page per write can be partly filled, so bytes alone do not tell). Older writes are read
    /// and forgotten.
    private func pagesInUse(unread: Int) -> Int {
        var remaining = unread
        var pages = 0
        var index = writesInPipe.count
        while remaining > 0 && index > 0 {
            index -= 1
            remaining -= writesInPipe[index].bytes
            pages += writesInPipe[index].pages
        }
        writesInPipe.removeFirst(index)
        // Bytes not written by this writer (none in practice): a page each, to be safe.
        if remaining > 0 { pages += remaining / Self.pageSize + 2 }
        return pages
    }

    /// The offset just after the newline that ends the line at `offset` (or the end of the bytes).
    private func lineEnd(from offset: Int) -> Int {
        pending.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int in
            let base = bytes.baseAddress!
            guard let found = memchr(base + offset, 0x0A, bytes.count - offset) else { return bytes.count }
            return base.distance(to: UnsafeRawPointer(found)) + 1
        }
    }

    /// Grows a pipe to 1 MiB where allowed (halving down to 64 KiB); its capacity, or nil when
    /// `descriptor` is not a pipe.
    private static func growPipe(_ descriptor: Int32) -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return nil }
        #if os(Linux)
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ
        let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ
        var size: Int32 = 1 << 20
        while size > 1 << 16 && fcntl(descriptor, setPipeSize, size) < 0 { size /= 2 }
        let capacity = fcntl(descriptor, getPipeSize)
        return capacity > 0 ? Int(capacity) : nil
        #else
        return nil
        #endif
    }

    /// True when the reading end is closed, found without writing (POLLERR on a pipe whose
    /// reader is gone), so that an idle daemon notices a closed stdout too.
    var isPeerGone: Bool {
        var descriptor = pollfd(fd: fileDescriptor, events: 0, revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
    }
}
