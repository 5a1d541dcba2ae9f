/// The release of chatfeed: what `chatfeed --version` and `chatfeedd --version` print, and the
/// newest entry of CHANGELOG.md.
public enum ChatfeedVersion {
    public static let current = "0.2.0"
}
