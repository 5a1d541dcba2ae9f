import ChatModel
import Logging

/// Writes through another handler with the message and every metadata value made safe for a
/// terminal (`TerminalText.sanitized`): a method name or an id from a request cannot put escape
/// sequences on the operator's terminal through a log line.
struct SanitizingLogHandler: LogHandler {
    var inner: any LogHandler

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue.mapValues(Self.sanitized) }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.sanitized) }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.sanitized(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.sanitized)
        inner.log(event: event)
    }

    private static func sanitized(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(TerminalText.sanitized(text))
        case .stringConvertible(let value): .string(TerminalText.sanitized(value.description))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(sanitized))
        case .array(let array): .array(array.map(sanitized))
        }
    }
}
