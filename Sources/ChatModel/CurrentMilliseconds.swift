import Foundation

/// Now, in milliseconds since the Unix epoch, rounded down: the unit of every date in chatfeed.
public func currentMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
