import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A running `chatfeedd` with its stdin and stdout as raw pipe descriptors; stderr goes to a file.
///
/// The tests' `ChildProcess` (TestSupport) does the same, but TestSupport is a test-only target of
/// the chatfeed package, which a package outside it cannot depend on; this copy is the price of
/// keeping the benchmarks in a package of their own. It also differs where a load tool must:
/// writes from several threads under one lock, and the spawn time for start-up figures.
final class DaemonProcess: @unchecked Sendable {
    let pid: pid_t
    /// Our end of the daemon's stdin.
    private(set) var stdinFD: Int32
    /// Our end of the daemon's stdout.
    let stdoutFD: Int32
    let stderrPath: String
    /// When `posix_spawn` was called (monotonic ns).
    let spawnedAt: UInt64
    private let writeLock = NSLock()

    init(executable: String, arguments: [String], stderrPath: String) throws {
        guard access(executable, X_OK) == 0 else {
            throw BenchError("no executable chatfeedd at \(executable): build it first with `swift build -c release` in the repository root, or pass --daemon PATH")
        }
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else {
            throw BenchError("pipe: \(String(cString: strerror(errno)))")
        }
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let errFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard errFD >= 0 else { throw BenchError("cannot open \(stderrPath)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the targets; every other descriptor of ours closes.
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errFD, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        var pid: pid_t = 0
        spawnedAt = nowNanoseconds()
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        close(input[0])
        close(output[1])
        close(errFD)
        guard rc == 0 else {
            close(input[1]); close(output[0])
            throw BenchError("posix_spawn \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        stdinFD = input[1]
        stdoutFD = output[0]
        self.stderrPath = stderrPath
    }

    /// Writes whole bytes to the daemon's stdin under a lock, so that lines from several threads
    /// never interleave. Blocks while the pipe is full. Returns false when the pipe is closed.
    @discardableResult
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        writeLock.lock()
        defer { writeLock.unlock() }
        return writeAll(bytes)
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard stdinFD >= 0 else { return false }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(stdinFD, bytes.baseAddress! + offset, bytes.count - offset)
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Closes the daemon's stdin: it commits what is pending and exits.
    func closeInput() {
        writeLock.lock()
        defer { writeLock.unlock() }
        if stdinFD >= 0 {
            close(stdinFD)
            stdinFD = -1
        }
    }

    /// Waits for the exit and returns the status.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(stdoutFD)
        return status
    }

    func terminate() { kill(pid, SIGTERM) }

    /// A field of /proc/PID/status in kB (VmRSS, VmHWM, RssAnon, RssFile…), or nil.
    func statusKiB(_ field: String) -> Int? { procStatusKiB(pid: pid, field) }

    /// A field of /proc/PID/io (wchar: bytes written through write(2)/pwrite(2)…), or nil.
    func io(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ": ") {
            return Int(line.dropFirst(field.count + 2))
        }
        return nil
    }

    /// User + system CPU seconds of the daemon so far (/proc/PID/stat).
    func cpuSeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After "pid (comm)": state is field 3, utime 14 and stime 15 (1-based in proc(5)).
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

func procStatusKiB(pid: pid_t, _ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let value = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
        return value.flatMap { Int($0) }
    }
    return nil
}

/// Reads the daemon's stdout and hands whole lines (without "\n") with their arrival time.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 1 << 18)

    init(fd: Int32) { self.fd = fd }

    /// Calls `body` for each line of the next read; false at end of output.
    mutating func readLines(_ body: (UnsafeRawBufferPointer, UInt64) -> Void) -> Bool {
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { return true }
        guard n > 0 else { return false }
        let now = nowNanoseconds()
        chunk.withUnsafeBytes { raw in
            var start = 0
            let bytes = raw.prefix(n)
            if !buffer.isEmpty {
                guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
                    buffer.append(contentsOf: bytes)
                    return
                }
                buffer.append(contentsOf: bytes[..<newline])
                buffer.withUnsafeBytes { body($0, now) }
                buffer.removeAll(keepingCapacity: false)
                start = newline + 1
            }
            while start < n {
                guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                    buffer.append(contentsOf: bytes[start...])
                    return
                }
                body(UnsafeRawBufferPointer(rebasing: raw[start..<newline]), now)
                start = newline + 1
            }
        }
        return true
    }
}
