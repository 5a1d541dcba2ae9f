import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// glibc's `pipe2` (not exported by the Glibc module): pipes created close-on-exec atomically.
@_silgen_name("pipe2")
private func systemPipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// A failure of the harness itself: a timeout, a child that died, a malformed line.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// How a child ended; an integer literal is an exit status (`outcome.status == 0`).
public enum ExitStatus: Equatable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    case exited(Int32)
    case signaled(Int32)

    public init(integerLiteral value: Int32) { self = .exited(value) }

    public var description: String {
        switch self {
        case .exited(let code): "exit status \(code)"
        case .signaled(let signal): "killed by signal \(signal)"
        }
    }
}

/// A child process started with `posix_spawn`, with pipes for stdin and stdout and stderr to a
/// file. Every descriptor the harness creates is close-on-exec, so children of tests that run in
/// parallel never inherit each other's pipes (a stray write end would keep a stdin open forever).
///
/// A watchdog kills the child with SIGKILL after `lifetime` seconds, so that no test can hang
/// forever even when a wait forgets its timeout; releasing the object kills a child still running.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    public let command: String
    public let stderrPath: String
    private let lock = NSLock()
    private var stdinFD: Int32
    private var stdoutFD: Int32
    private var status: ExitStatus?
    private var readerStop = false
    private var readerPaused = false
    private var readerDone = false
    private let readerFinished = NSCondition()

    /// Ignore SIGPIPE in the test process: writing to a child that exited must be an error
    /// (EPIPE), not the end of the test run.
    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable` with `arguments` and the test's environment plus `environment`.
    /// `onLine` is called on a reader thread for every line of stdout (without its `\n`), then
    /// `onEnd` once at end of stdout.
    public init(
        executable: String, arguments: [String], environment extra: [String: String] = [:], stderrPath: String,
        lifetime: TimeInterval = 120,
        onLine: @escaping @Sendable ([UInt8]) -> Void, onEnd: @escaping @Sendable () -> Void
    ) throws {
        _ = Self.ignoreSIGPIPE
        command = ([executable] + arguments).joined(separator: " ")
        self.stderrPath = stderrPath
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        guard systemPipe2(&input, O_CLOEXEC) == 0 else { throw HarnessError("pipe2: errno \(errno)") }
        guard systemPipe2(&output, O_CLOEXEC) == 0 else {
            close(input[0]); close(input[1])
            throw HarnessError("pipe2: errno \(errno)")
        }
        let errorFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard errorFD >= 0 else {
            close(input[0]); close(input[1]); close(output[0]); close(output[1])
            throw HarnessError("cannot open \(stderrPath): errno \(errno)")
        }
        defer { close(errorFD) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorFD, 2)

        // A clean signal state: nothing blocked, default dispositions for the signals tests send.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The test's environment, without a configuration file named by it: the tests choose theirs.
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "CHATFEED_CONFIG" }
            .merging(extra) { $1 }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(input[0])
        close(output[1])
        guard spawned == 0 else {
            close(input[1]); close(output[0])
            throw HarnessError("cannot start \(executable): error \(spawned)")
        }
        pid = child
        stdinFD = input[1]
        stdoutFD = output[0]

        let thread = Thread { [self] in readLoop(onLine: onLine, onEnd: onEnd) }
        thread.name = "child.stdout.\(child)"
        thread.start()

        DispatchQueue.global().asyncAfter(deadline: .now() + lifetime) { [weak self] in
            guard let self, self.killIfRunning(SIGKILL) else { return }
            FileHandle.standardError.write(Data("test watchdog: killed \(self.command) after \(lifetime) s\n".utf8))
        }
    }

    deinit {
        if status == nil {
            kill(pid, SIGKILL)
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        }
        stopReader()
        if stdinFD >= 0 { close(stdinFD) }
        if stdoutFD >= 0 { close(stdoutFD) }
    }

    // MARK: stdout

    private func readLoop(onLine: @Sendable ([UInt8]) -> Void, onEnd: @Sendable () -> Void) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let fd = stdoutFD
        defer {
            if !pending.isEmpty { onLine(pending) }
            onEnd()
            readerFinished.lock()
            readerDone = true
            readerFinished.broadcast()
            readerFinished.unlock()
        }
        while true {
            readerFinished.lock()
            let stop = readerStop
            let paused = readerPaused
            readerFinished.unlock()
            if stop { return }
            if paused {
                usleep(5_000)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 50)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 { return }
            var start = 0
            for index in 0..<count where buffer[index] == 0x0A {
                pending.append(contentsOf: buffer[start..<index])
                onLine(pending)
                pending.removeAll(keepingCapacity: true)
                start = index + 1
            }
            pending.append(contentsOf: buffer[start..<count])
        }
    }

    private func stopReader() {
        readerFinished.lock()
        readerStop = true
        let deadline = Date(timeIntervalSinceNow: 10)
        while !readerDone && readerFinished.wait(until: deadline) {}
        readerFinished.unlock()
    }

    /// Stops or resumes reading stdout (a client that stops reading: the pipe fills up and the
    /// child's writes block).
    public func setReadingPaused(_ paused: Bool) {
        readerFinished.lock()
        readerPaused = paused
        readerFinished.unlock()
    }

    /// Stops reading and closes the read end of the child's stdout: its next write fails (EPIPE).
    public func closeStdout() {
        stopReader()
        lock.lock()
        defer { lock.unlock() }
        if stdoutFD >= 0 {
            close(stdoutFD)
            stdoutFD = -1
        }
    }

    // MARK: stdin

    /// Writes all of `bytes` to the child's stdin; false when it is closed or the child is gone.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        lock.lock()
        let fd = stdinFD
        lock.unlock()
        guard fd >= 0 else { return false }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Closes stdin: the child reads end of input.
    public func closeStdin() {
        lock.lock()
        defer { lock.unlock() }
        if stdinFD >= 0 {
            close(stdinFD)
            stdinFD = -1
        }
    }

    // MARK: Life

    /// Sends `signal` unless the child was already reaped (so that a reused pid is never hit).
    @discardableResult
    public func killIfRunning(_ signal: Int32) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        reapLocked()
        guard status == nil else { return false }
        return kill(pid, signal) == 0
    }

    private func reapLocked() {
        guard status == nil else { return }
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, WNOHANG)
        guard result == pid else { return }
        let signal = raw & 0x7F
        status = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
    }

    /// The exit status, nil while running.
    public var exitStatus: ExitStatus? {
        lock.lock()
        defer { lock.unlock() }
        reapLocked()
        return status
    }

    public var isRunning: Bool { exitStatus == nil }

    /// Waits for the child to end; nil after `timeout` seconds.
    public func waitForExit(timeout: TimeInterval) -> ExitStatus? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let status = exitStatus { return status }
            if Date() > deadline { return nil }
            usleep(2_000)
        }
    }

    /// Waits for the child to end; kills it and throws after `timeout` seconds.
    public func waitForExitOrKill(timeout: TimeInterval) throws -> ExitStatus {
        if let status = waitForExit(timeout: timeout) { return status }
        killIfRunning(SIGKILL)
        _ = waitForExit(timeout: 10)
        throw HarnessError("\(command) did not exit within \(timeout) s; killed. stderr:\n\(stderrTail())")
    }

    /// The end of what the child wrote on stderr.
    public func stderrTail(_ count: Int = 4000) -> String {
        guard let data = FileManager.default.contents(atPath: stderrPath) else { return "" }
        return String(decoding: data.suffix(count), as: UTF8.self)
    }
}

/// A value behind a lock, shared with reader threads.
public final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
