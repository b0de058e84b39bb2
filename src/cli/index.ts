console.log('payhook CLI: not built yet');
