"""The conference map: papers laid out in 2-D, clustered into named topics and themes."""
