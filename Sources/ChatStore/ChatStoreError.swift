/// A database that this chatfeed cannot use as it is.
public enum ChatStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file was written by a newer chatfeed.
    case schemaTooNew(path: String, version: Int, supported: Int)
    /// A read-only store found a schema that needs migrating first.
    case schemaOutdated(path: String, version: Int, required: Int)

    public var description: String {
        switch self {
        case .schemaTooNew(let path, let version, let supported):
            "database '\(path)' has schema version \(version), newer than this chatfeed supports (\(supported)); upgrade chatfeed"
        case .schemaOutdated(let path, let version, let required):
            "database '\(path)' has schema version \(version) but version \(required) is required; open it once read-write to migrate it"
        }
    }
}
