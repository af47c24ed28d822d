// The MdocProximity module. Placeholder line keeping the target non-empty; replaced by the real sources.
