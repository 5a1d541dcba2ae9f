import Foundation
import JSONCodec
import WireProtocol

#if canImport(Glibc)
import Glibc
#endif

/// A JSON-RPC error response.
struct RPCFailure: Error, Equatable, CustomStringConvertible {
    var code: Int
    var message: String
    var data: JSONValue?

    var description: String { "JSON-RPC error \(code): \(message)" }
}

/// The answer to a request.
enum Reply: CustomStringConvertible {
    case result(JSONValue)
    case error(RPCFailure)

    var result: JSONValue? {
        if case .result(let value) = self { return value }
        return nil
    }

    var failure: RPCFailure? {
        if case .error(let failure) = self { return failure }
        return nil
    }

    var description: String {
        switch self {
        case .result(let value): "result \(value)"
        case .error(let failure): failure.description
        }
    }
}

/// A running `chatfeedd` on a temporary database, driven through its stdin and read through its
/// stdout: responses are routed by id, notifications kept in order.
///
/// Every wait has a timeout; the child is killed when the object is released, and by a watchdog
/// after `lifetime` seconds whatever happens.
final class Daemon: @unchecked Sendable {
    /// Generous: debug builds on two cores shared with other builds and parallel tests.
    static let defaultTimeout: TimeInterval = 30

    let directory: TemporaryDirectory
    let databasePath: String
    private(set) var child: ChildProcess!
    private let state = NSCondition()
    private var responsesByID: [JSONValue: JSONValue] = [:]
    /// Every response, in the order received.
    private var responseLog: [JSONValue] = []
    /// Every notification (`{"method","params"}`), in the order received.
    private var notificationLog: [JSONValue] = []
    /// Lines that are not a JSON-RPC 2.0 response or notification.
    private var malformedLines: [String] = []
    /// Every line of stdout, as text.
    private var rawLog: [String] = []
    private var stdoutEnded = false
    /// The harness's own ids start high, away from the ids that tests write by hand.
    private var nextID: Int64 = 1_000_000_000

    /// Starts a daemon on `database` (default: a new file in a new temporary directory).
    init(
        directory: TemporaryDirectory? = nil, database: String = "chatfeed.sqlite", extraArguments: [String] = [],
        lifetime: TimeInterval = 120
    ) throws {
        let directory = try directory ?? TemporaryDirectory()
        self.directory = directory
        databasePath = directory.path(database)
        let stderrPath = directory.path("chatfeedd-\(UUID().uuidString.prefix(8)).stderr")
        child = try ChildProcess(
            executable: Paths.daemon, arguments: ["--database", databasePath] + extraArguments,
            stderrPath: stderrPath, lifetime: lifetime,
            onLine: { [weak self] line in self?.received(line) },
            onEnd: { [weak self] in self?.ended() })
    }

    deinit {
        child = nil
    }

    // MARK: Reading

    private func received(_ line: [UInt8]) {
        let parsed = try? JSONValue(parsing: line)
        state.lock()
        defer {
            state.broadcast()
            state.unlock()
        }
        rawLog.append(String(decoding: line, as: UTF8.self))
        guard let message = parsed, case .object(let object) = message, object["jsonrpc"] == .string("2.0") else {
            malformedLines.append(String(decoding: line.prefix(500), as: UTF8.self))
            return
        }
        if object["method"] != nil, object["id"] == nil {
            notificationLog.append(message)
        } else if let id = object["id"], object["result"] != nil || object["error"] != nil {
            responseLog.append(message)
            if id != .null { responsesByID[id] = message }
        } else {
            malformedLines.append(String(decoding: line.prefix(500), as: UTF8.self))
        }
    }

    private func ended() {
        state.lock()
        stdoutEnded = true
        state.broadcast()
        state.unlock()
    }

    /// Waits until `condition` holds (checked under the lock) or throws after `timeout`.
    private func wait(
        _ what: @autoclosure () -> String, timeout: TimeInterval, until condition: () -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock()
        defer { state.unlock() }
        while !condition() {
            if stdoutEnded {
                throw HarnessError("stdout ended while waiting for \(what()); \(child.exitStatus.map { "\($0)" } ?? "running"); stderr:\n\(child.stderrTail())")
            }
            if !state.wait(until: deadline) && !condition() {
                throw HarnessError("timed out after \(timeout) s waiting for \(what()); stderr:\n\(child.stderrTail())")
            }
        }
    }

    /// Lines of stdout that were not protocol messages (must stay empty).
    var malformed: [String] { state.lock(); defer { state.unlock() }; return malformedLines }

    /// Every response received so far, in order.
    var responses: [JSONValue] { state.lock(); defer { state.unlock() }; return responseLog }

    var rawLineCount: Int { state.lock(); defer { state.unlock() }; return rawLog.count }

    /// The lines of stdout from index `start` on, as text.
    func rawLines(from start: Int) -> ArraySlice<String> {
        state.lock()
        defer { state.unlock() }
        return rawLog[min(start, rawLog.count)...]
    }

    var responseCount: Int { state.lock(); defer { state.unlock() }; return responseLog.count }

    /// Every notification received so far, in order.
    var notifications: [JSONValue] { state.lock(); defer { state.unlock() }; return notificationLog }

    var notificationCount: Int { state.lock(); defer { state.unlock() }; return notificationLog.count }

    /// Notifications from index `start` on.
    func notifications(from start: Int) -> ArraySlice<JSONValue> {
        state.lock()
        defer { state.unlock() }
        return notificationLog[min(start, notificationLog.count)...]
    }

    /// Waits until more than `count` notifications have arrived.
    func waitForNotifications(beyond count: Int, timeout: TimeInterval = Daemon.defaultTimeout) throws {
        try wait("a notification after #\(count)", timeout: timeout) { notificationLog.count > count }
    }

    /// Waits until more than `count` responses have arrived.
    func waitForResponses(atLeast count: Int, timeout: TimeInterval = Daemon.defaultTimeout) throws {
        try wait("\(count) responses", timeout: timeout) { responseLog.count >= count }
    }

    /// Waits for the end of stdout (the daemon exited or closed it).
    func waitForEndOfOutput(timeout: TimeInterval = Daemon.defaultTimeout) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        state.lock()
        defer { state.unlock() }
        while !stdoutEnded {
            if !state.wait(until: deadline) && !stdoutEnded {
                throw HarnessError("stdout did not end within \(timeout) s")
            }
        }
    }

    // MARK: Writing

    /// Writes raw bytes to stdin.
    @discardableResult
    func send(raw bytes: [UInt8]) -> Bool { child.send(bytes) }

    /// Writes one line (a `\n` is appended).
    @discardableResult
    func send(line: String) -> Bool { child.send(Array(line.utf8) + [0x0A]) }

    /// A fresh numeric id.
    func makeID() -> JSONValue {
        state.lock()
        defer { state.unlock() }
        nextID += 1
        return .integer(nextID)
    }

    /// The line of a request (`id` nil: a notification).
    static func line(id: JSONValue?, method: String, params: JSONValue?) -> [UInt8] {
        var object: JSONObject = ["jsonrpc": "2.0"]
        if let id { object.append("id", id) }
        object.append("method", .string(method))
        if let params { object.append("params", params) }
        return JSONValue.object(object).serialized() + [0x0A]
    }

    /// Sends a request without waiting; returns its id.
    @discardableResult
    func post(_ method: String, _ params: JSONValue? = nil) -> JSONValue {
        let id = makeID()
        child.send(Self.line(id: id, method: method, params: params))
        return id
    }

    /// Sends a notification (no id: no response).
    func notify(_ method: String, _ params: JSONValue? = nil) {
        child.send(Self.line(id: nil, method: method, params: params))
    }

    /// Waits for the response to `id`.
    func reply(to id: JSONValue, timeout: TimeInterval = Daemon.defaultTimeout) throws -> Reply {
        var message: JSONValue?
        try wait("the response to id \(id)", timeout: timeout) {
            message = responsesByID[id]
            return message != nil
        }
        return try Self.reply(from: message!)
    }

    static func reply(from message: JSONValue) throws -> Reply {
        if let result = message["result"] { return .result(result) }
        guard let error = message["error"], let code = error["code"]?.int64Value,
              let text = error["message"]?.stringValue
        else { throw HarnessError("malformed response \(message)") }
        return .error(RPCFailure(code: Int(code), message: text, data: error["data"]))
    }

    /// Sends a request and waits for its answer.
    func request(_ method: String, _ params: JSONValue? = nil, timeout: TimeInterval = Daemon.defaultTimeout) throws -> Reply {
        try reply(to: post(method, params), timeout: timeout)
    }

    /// Sends a request and returns its result; an error response is thrown as `RPCFailure`.
    @discardableResult
    func call(_ method: String, _ params: JSONValue? = nil, timeout: TimeInterval = Daemon.defaultTimeout) throws -> JSONValue {
        switch try request(method, params, timeout: timeout) {
        case .result(let result): return result
        case .error(let failure): throw failure
        }
    }

    // MARK: Life

    /// Closes stdin (end of input).
    func closeStdin() { child.closeStdin() }

    /// Closes the read end of the daemon's stdout.
    func closeStdout() { child.closeStdout() }

    func signal(_ signal: Int32) { child.killIfRunning(signal) }

    /// Stops or resumes reading the daemon's stdout.
    func setReadingPaused(_ paused: Bool) { child.setReadingPaused(paused) }

    var isRunning: Bool { child.isRunning }

    /// Waits for the daemon to exit (killing it after `timeout`).
    func waitForExit(timeout: TimeInterval = Daemon.defaultTimeout) throws -> ExitStatus {
        try child.waitForExitOrKill(timeout: timeout)
    }

    /// Ends input and waits for the exit status.
    func shutDown(timeout: TimeInterval = Daemon.defaultTimeout) throws -> ExitStatus {
        closeStdin()
        return try waitForExit(timeout: timeout)
    }

    var stderr: String { child.stderrTail(1 << 20) }
}
