import JSONCodec
import Synchronization
import WireProtocol

/// What one connection's traffic tells the metrics: the method of each request (kept by id until
/// its response, so that an error is counted by method and code), and the kind of each line out —
/// read from the line's first bytes, never by parsing a whole response.
final class GatewayTraffic: Sendable {
    private let metrics: GatewayMetrics
    /// Requests waiting for their response: id (as JSON text) → method. Bounded: a client that
    /// sends many notifications-with-ids that are never answered cannot grow it.
    private let pending = Mutex<[String: String]>([:])
    private let subscriptions = Atomic<Int>(0)
    private static let pendingLimit = 4096

    init(metrics: GatewayMetrics) {
        self.metrics = metrics
    }

    /// Subscriptions this connection holds, by the responses it got.
    var openSubscriptions: Int { subscriptions.load(ordering: .relaxed) }

    /// A request line in.
    func received(_ line: [UInt8]) {
        guard let message = try? JSONValue(parsing: line), case .object(let object) = message else {
            metrics.request("invalid")
            return
        }
        let method = object["method"]?.stringValue.flatMap { WireMethod(rawValue: $0)?.rawValue } ?? "unknown"
        metrics.request(method)
        guard let id = object["id"], id != .null else { return }
        let key = String(decoding: id.serialized(), as: UTF8.self)
        pending.withLock { pending in
            if pending.count >= Self.pendingLimit { pending.removeAll() }
            pending[key] = method
        }
    }

    private static let notification = Array(#"{"jsonrpc":"2.0","method":"#.utf8)
    private static let batch = Array(#"{"jsonrpc":"2.0","method":"feed.batch""#.utf8)
    private static let reset = Array(#"{"jsonrpc":"2.0","method":"feed.reset""#.utf8)
    private static let response = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let error = Array(#","error":{"code":"#.utf8)

    /// A line out (its bytes, without the newline); true when it is a batch or a reset
    /// (`notificationWritten` follows its write).
    @discardableResult
    func sent(_ line: UnsafeRawBufferPointer) -> Bool {
        if line.starts(with: Self.notification) {
            if line.starts(with: Self.batch) {
                metrics.batchSent()
                return true
            }
            if line.starts(with: Self.reset) {
                metrics.resetSent()
                return true
            }
            return false
        }
        guard line.starts(with: Self.response), let idEnd = Self.endOfID(in: line, from: Self.response.count) else { return false }
        let key = String(decoding: line[Self.response.count..<idEnd], as: UTF8.self)
        let method = pending.withLock { pending in
            defer { if pending.isEmpty { pending = [:] } }  // an idle connection keeps no table
            return pending.removeValue(forKey: key)
        } ?? "unknown"
        if line[idEnd...].starts(with: Self.error) {
            var index = idEnd + Self.error.count
            var sign = 1
            if index < line.count, line[index] == UInt8(ascii: "-") { sign = -1; index += 1 }
            var code = 0
            while index < line.count, let digit = Int(exactly: line[index]).map({ $0 - 48 }), (0...9).contains(digit) {
                code = code * 10 + digit
                index += 1
            }
            metrics.error(method, code: sign * code)
        } else if method == WireMethod.feedSubscribe.rawValue {
            subscriptions.add(1, ordering: .relaxed)
            metrics.subscriptionsChanged(by: 1)
        } else if method == WireMethod.feedUnsubscribe.rawValue {
            subscriptions.subtract(1, ordering: .relaxed)
            metrics.subscriptionsChanged(by: -1)
        }
        return false
    }

    func notificationWritten() { metrics.notificationWritten() }

    /// The index just after the JSON id that starts at `start` (a string, a number or null).
    private static func endOfID(in line: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < line.count else { return nil }
        var index = start
        if line[index] == UInt8(ascii: "\"") {
            index += 1
            while index < line.count {
                if line[index] == UInt8(ascii: "\\") { index += 2; continue }
                if line[index] == UInt8(ascii: "\"") { return index + 1 }
                index += 1
            }
            return nil
        }
        while index < line.count, line[index] != UInt8(ascii: ",") { index += 1 }
        return index < line.count ? index : nil
    }
}
