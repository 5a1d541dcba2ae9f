import Foundation

/// Now, in milliseconds since the Unix epoch, rounded down: the unit of every date in chatfeed.
public func currentMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

extension Duration {
    /// The duration in seconds, as the `TimeInterval` Foundation and Dispatch take.
    @inlinable
    public var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
