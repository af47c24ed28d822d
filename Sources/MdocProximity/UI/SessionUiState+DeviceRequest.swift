import Mdoc

extension SessionUiState {
    /// The request to review, parsed with the Mdoc module's DeviceRequest (the SDK's one
    /// model of it); `nil` when there is none or it is malformed. A consent sheet lists
    /// `docRequests[i].itemsRequest` (docType, and per namespace the element
    /// identifiers with their intent-to-retain flags) and the reader's certificate.
    public func parseDeviceRequest() -> DeviceRequest? {
        deviceRequest.flatMap { try? DeviceRequest(encoded: $0) }
    }
}
