// MdocProximity tests are being written.
