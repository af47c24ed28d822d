// The JOSE module (JWK, JWS, JWT, JWE). Placeholder line keeping the target non-empty; replaced by the real sources.
